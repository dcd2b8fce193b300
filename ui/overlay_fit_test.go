package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// ? shows every key the console has, at every size it runs at: the help
// bubble's one row of columns cut the last groups (freeze, filter, quit;
// at 80 columns the delay keys too) behind an ellipsis.
func TestView_HelpShowsEveryKeyAtEverySize(t *testing.T) {
	for _, ro := range []bool{false, true} {
		for _, sz := range [][2]int{{80, 24}, {100, 30}, {120, 36}, {200, 50}} {
			t.Run(fmt.Sprintf("readonly=%v/%dx%d", ro, sz[0], sz[1]), func(t *testing.T) {
				m := fixedModel(healthySnapshot(), themes.Default(), sz[0], sz[1])
				m.opts.ReadOnly, m.keys = ro, newKeyMap(ro)
				m = pressKeys(m, "?")
				got := m.View()
				checkFits(t, got, sz[0], sz[1])
				for _, g := range m.keys.FullHelp() {
					for _, b := range g {
						if b.Enabled() && !strings.Contains(got, b.Help().Desc) {
							t.Errorf("help lacks %q (%s):\n%s", b.Help().Desc, b.Help().Key, got)
						}
					}
				}
				if !strings.Contains(got, "╚") {
					t.Errorf("the help box has lost its bottom edge:\n%s", got)
				}
			})
		}
	}
}

func pressKeys(m Model, keys ...string) Model {
	for _, k := range keys {
		mm, _ := m.Update(keyMsg(k))
		m = mm.(Model)
	}
	return m
}
