package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/rpcdash/rpcdash/engine"
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

// An overlay taller than the room under the header is cut inside its box,
// saying so (the detail: what more is below, to scroll to), and keeps its
// frame and the line that says how to close it.
func TestView_TallOverlayKeepsItsFrameAndCloseHint(t *testing.T) {
	s := healthySnapshot()
	for i := range 12 {
		s.Endpoints[0].Exclusions = append(s.Endpoints[0].Exclusions, fmt.Sprintf("manual: reason number %d", i))
	}
	s.Endpoints[0].Errors = nil
	for i := range 8 {
		s.Endpoints[0].Errors = append(s.Endpoints[0].Errors, engine.EndpointError{Time: t0.Add(-time.Duration(i) * time.Second), Text: fmt.Sprintf("error %d", i)})
	}
	m := pressKeys(fixedModel(s, themes.Default(), 80, 24), "enter")
	if m.overlay != overlayDetail {
		t.Fatalf("enter opened overlay %d", m.overlay)
	}
	got := m.View()
	checkFits(t, got, 80, 24)
	for _, want := range []string{"╔", "╚", "enter or esc closes", "more below"} {
		if !strings.Contains(got, want) {
			t.Errorf("80×24 detail lacks %q:\n%s", want, got)
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

// boxLines is what is inside an overlay box drawn on v: of each line with
// the box's edges (║), what lies between them, trimmed. The panels around
// the box stay drawn, and are left out.
func boxLines(v string) []string {
	var out []string
	for _, l := range strings.Split(ansi.Strip(v), "\n") {
		first, last := strings.Index(l, "║"), strings.LastIndex(l, "║")
		if first < 0 || last == first {
			continue
		}
		out = append(out, strings.TrimSpace(l[first+len("║"):last]))
	}
	return out
}
