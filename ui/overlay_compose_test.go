package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rpcdash/rpcdash/themes"
)

// A menu or a confirmation is drawn over the panels, not over an empty
// screen: the endpoint it acts on, and the pool beside it, stay in sight
// above the box (console audit, stop 56: every menu blanked the screen
// mid-incident).
func TestView_AMenuLeavesThePoolInSight(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(incidentSnapshot(), themes.Default(), sz[0], sz[1])
		first := m.snap.Endpoints[0].Name
		for _, keys := range [][]string{{"f"}, {"d"}} { // the fault menu; the drain confirmation
			v := pressKeys(m, keys...).View()
			checkFits(t, v, sz[0], sz[1])
			lines := strings.Split(ansi.Strip(v), "\n")
			boxTop := -1
			for i, l := range lines {
				if strings.Contains(l, "╔") {
					boxTop = i
					break
				}
			}
			if boxTop < 0 {
				t.Fatalf("%dx%d %v: no box:\n%s", sz[0], sz[1], keys, v)
			}
			above := strings.Join(lines[:boxTop], "\n")
			if !strings.Contains(above, "ENDPOINT") || !strings.Contains(above, first) {
				t.Errorf("%dx%d %v: the endpoint table is not in sight above the box:\n%s", sz[0], sz[1], keys, v)
			}
			for _, l := range lines[boxTop:] {
				if i := strings.Index(l, "║"); i >= 0 && strings.TrimSpace(l[:i]) != "" {
					t.Errorf("%dx%d %v: the panels show beside the box: %q", sz[0], sz[1], keys, l)
				}
			}
		}
	}
}
