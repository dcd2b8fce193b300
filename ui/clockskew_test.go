package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Attached to an instance whose clock is 5 minutes behind this one, the
// console read the engine's instants with its own clock: every fresh
// Snapshot said "snapshot 5m", a fault with 42 s to run said 0s and the
// detail's back-off "0s left". They are read against the engine's clock
// as the last Snapshot gave it.
func TestView_AnEngineClockBehindIsReadAsTheEngines(t *testing.T) {
	s := healthySnapshot()
	behind := 5 * time.Minute
	s.Time, s.Started = s.Time.Add(-behind), s.Started.Add(-behind)
	ep := &s.Endpoints[0]
	ep.Fault = &engine.FaultInfo{Mode: engine.FaultError, Rate: 1, Since: s.Time.Add(-18 * time.Second), Expires: s.Time.Add(42 * time.Second)}
	ep.BackoffUntil = s.Time.Add(20 * time.Second)
	m := fixedModel(s, themes.Default(), 120, 36)
	v := m.View()
	if !strings.Contains(v, "snapshot 0s") || !strings.Contains(lineWith(v, "alchemy"), "42s") {
		t.Errorf("a fresh Snapshot of a clock 5m behind, a fault 42 s from its end:\n%s", v)
	}
	if d := strings.Join(m.detailLines(100), "\n"); !strings.Contains(d, "(20s left)") {
		t.Errorf("the detail's back-off:\n%s", d)
	}
}
