package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// The endpoint a drain question is about leaves the pool while it is
// open (an attached instance restarted without it): the question says
// so instead of the routable count of a pool it is no longer in.
func TestDrainQuestion_SaysWhenItsEndpointLeftThePool(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 120, 36)
	m = press(t, m, "d")
	ep := m.confirm.act.endpoint
	if m.overlay != overlayConfirm || ep == "" {
		t.Fatalf("d did not ask:\n%s", m.View())
	}
	snap := healthySnapshot()
	snap.Endpoints = snap.Endpoints[1:]
	m.onSnapshot(snapshotMsg{snap: snap})
	if m.overlay != overlayConfirm || m.confirm.act.endpoint != ep {
		t.Fatalf("the question changed: %+v", m.confirm)
	}
	if v := m.View(); !strings.Contains(v, ep+" is no longer in the pool") || strings.Contains(v, "stay routable") {
		t.Fatalf("question:\n%s", v)
	}
}
