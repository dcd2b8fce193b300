package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// A lagging endpoint back within chain.max_head_lag stays out until
// probes.recover probes in a row agree. The console showed LAG 0! beside
// LAGGING, and with nothing routable the banner said "lagging 0 behind":
// now the badge and the banner say it is rejoining, and how far along.
func TestView_CaughtUpEndpointSaysItIsRejoining(t *testing.T) {
	s := healthySnapshot()
	s.Settings.ProbeRecover = 3
	ep := &s.Endpoints[0]
	ep.LagExcluded, ep.Lag, ep.LagInSync = true, 0, 1
	for _, c := range []struct {
		w, h int
		want string
	}{
		{120, 36, "REJOIN 1/3"},
		{80, 24, "RJN "},
	} {
		got := fixedModel(s, themes.Default(), c.w, c.h).View()
		if !strings.Contains(got, c.want) || strings.Contains(got, "LAGGING") {
			t.Errorf("%d×%d: want %q and no LAGGING:\n%s", c.w, c.h, c.want, got)
		}
	}

	// Still beyond the bound: lagging, by how much.
	ep.Lag, ep.LagInSync = 9, 0
	if got := fixedModel(s, themes.Default(), 120, 36).View(); !strings.Contains(got, "LAGGING") || strings.Contains(got, "REJOIN") {
		t.Errorf("9 behind with max lag %d: want LAGGING:\n%s", s.MaxLag, got)
	}

	ep.Lag, ep.LagInSync = 0, 2
	if got := notRoutableReason(*ep, s); got != "caught up, rejoining after 2 of 3 probes in sync" {
		t.Errorf("reason %q", got)
	}
	ep.Lag = 9
	if got := notRoutableReason(*ep, s); got != "lagging 9 behind" {
		t.Errorf("reason %q", got)
	}
}

// After a flap (lagging again soon after a readmission) the readmission
// needs more probes than probes.recover: the badge and the reason count
// to the endpoint's own figure.
func TestView_AFlappedEndpointRejoinsAfterItsOwnCount(t *testing.T) {
	s := healthySnapshot()
	s.Settings.ProbeRecover = 3
	ep := &s.Endpoints[0]
	ep.LagExcluded, ep.Lag, ep.LagInSync, ep.LagRecoverNeed, ep.LagFlaps = true, 0, 4, 6, 1
	if got := fixedModel(s, themes.Default(), 120, 36).View(); !strings.Contains(got, "REJOIN 4/6") {
		t.Errorf("want REJOIN 4/6:\n%s", got)
	}
	if got := notRoutableReason(*ep, s); got != "caught up, rejoining after 4 of 6 probes in sync" {
		t.Errorf("reason %q", got)
	}
}
