package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// An open breaker's row says when it is tried again: only the detail said
// it, and an endpoint stayed out 4 minutes with healthy probes and no word
// on the table of when (console audit, stop 56).
func TestView_AnOpenBreakerSaysWhenItIsTriedAgain(t *testing.T) {
	for _, tc := range []struct {
		left time.Duration
		want string
	}{
		{45 * time.Second, "✖ OPEN 45s"},
		{200 * time.Millisecond, "✖ OPEN 1s"},
		{4*time.Minute + 10*time.Second, "✖ OPEN 5m"},
		{3 * time.Hour, "✖ OPEN 3h"},
	} {
		s := healthySnapshot()
		s.Endpoints[0].Routable = false
		s.Endpoints[0].Breaker = engine.BreakerSnapshot{State: engine.BreakerOpen, Cooldown: 5 * time.Minute, NextTrialAt: s.Time.Add(tc.left)}
		for _, sz := range [][2]int{{80, 24}, {120, 36}} {
			m := fixedModel(s, themes.Default(), sz[0], sz[1])
			view := ansi.Strip(m.View())
			if !strings.Contains(view, tc.want+" ") {
				t.Errorf("%d×%d, trial in %s: the table lacks %q:\n%s", sz[0], sz[1], tc.left, tc.want, view)
			}
			checkFits(t, m.View(), sz[0], sz[1])
		}
	}
	// Due (the trial about to be taken): the word alone.
	s := healthySnapshot()
	s.Endpoints[0].Breaker = engine.BreakerSnapshot{State: engine.BreakerOpen, NextTrialAt: s.Time.Add(-time.Second)}
	if got := ansi.Strip(fixedModel(s, themes.Default(), 120, 36).stateCell(s.Endpoints[0])); got != "✖ OPEN" {
		t.Errorf("trial due: %q", got)
	}
}
