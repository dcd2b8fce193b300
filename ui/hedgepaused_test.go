package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/themes"
)

// Paused, hedging sends no hedge at the delays the methods table shows:
// every hedged method's SOURCE says paused, and the methods panel's title
// gives the reason (it showed only in a cut event line, the header's
// PAUSED beside sources that read as running).
func TestView_PausedHedgingIsShownInTheMethodsTableWithItsReason(t *testing.T) {
	s := healthySnapshot()
	s.Hedge.Paused = true
	s.Hedge.PauseReason = "2 of 3 endpoints answer at 3× their best recent median or slower at once"
	got := fixedModel(s, themes.Default(), 160, 48).View()
	if !strings.Contains(got, "Methods · last 1m · hedging paused: 2 of 3 endpoints answer at 3×") {
		t.Errorf("the methods panel's title lacks the reason:\n%s", got)
	}
	for _, name := range []string{"(all methods)", "eth_call"} {
		if line := lineWith(got, name+" "); !strings.Contains(line, "paused") {
			t.Errorf("%s's row does not say paused: %q", name, line)
		}
	}
	if got := fixedModel(healthySnapshot(), themes.Default(), 160, 48).View(); strings.Contains(got, "paused") {
		t.Errorf("running hedging shows paused:\n%s", got)
	}
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		for _, l := range strings.Split(fixedModel(s, themes.Default(), sz[0], sz[1]).View(), "\n") {
			if w := ansi.StringWidth(l); w > sz[0] {
				t.Fatalf("%d×%d: a line %d wide: %q", sz[0], sz[1], w, l)
			}
		}
	}
}
