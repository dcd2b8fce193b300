package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/rpcdash/rpcdash/themes"
)

// Without borders (below 100×30) the focused panel's column-header line
// starts with ▶, where the bordered layout puts "▶ Title" in the frame: tab
// changes the screen, colour off, and no row is spent on it.
func TestView_BorderlessLayoutShowsTheFocusedPanel(t *testing.T) {
	heads := map[focus]string{focusEndpoints: "ENDPOINT", focusMethods: "METHOD", focusEvents: "TIME"}
	for _, sz := range [][2]int{{80, 24}, {99, 40}, {160, 29}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := fixedModel(healthySnapshot(), themes.Default(), sz[0], sz[1])
			if m.layout().borders {
				t.Fatal("a size for the borderless layout has borders")
			}
			seen := map[string]focus{}
			for range numFocus {
				got := m.View()
				checkFits(t, got, sz[0], sz[1])
				if f, ok := seen[got]; ok {
					t.Fatalf("focus on panel %d and on panel %d draw the same screen:\n%s", f, m.focus, got)
				}
				seen[got] = m.focus
				var marked []string
				for _, line := range strings.Split(got, "\n") {
					if strings.HasPrefix(line, "▶") {
						marked = append(marked, line)
					}
				}
				if len(marked) != 1 || !strings.HasPrefix(strings.TrimLeft(strings.TrimPrefix(marked[0], "▶"), " "), heads[m.focus]) {
					t.Errorf("focus on panel %d: want one line, its %s header, marked ▶; got %q:\n%s", m.focus, heads[m.focus], marked, got)
				}
				m = pressKeys(m, "tab")
			}
		})
	}
}

// The marker takes the place of blanks: the screen keeps its rows, and the
// header keeps its columns, focused or not.
func TestView_FocusMarkerCostsNoRowOrColumn(t *testing.T) {
	m := fixedModel(incidentSnapshot(), themes.Default(), 80, 24)
	before := strings.Split(m.View(), "\n")
	for range numFocus {
		m = pressKeys(m, "tab")
		after := strings.Split(m.View(), "\n")
		if len(after) != len(before) {
			t.Fatalf("focus on panel %d: %d lines, were %d", m.focus, len(after), len(before))
		}
		for i := range after {
			if !sameButMarker(before[i], after[i]) {
				t.Errorf("focus on panel %d: line %d changed beyond its marker:\n%q\n%q", m.focus, i, before[i], after[i])
			}
		}
		before = after
	}
}

// The cursor of a panel the keys do not go to is drawn faint, the focused
// panel's in the accent colour, as a second cue in colour.
func TestView_UnfocusedCursorIsFaint(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	m := fixedModel(healthySnapshot(), themes.Default(), 80, 24)
	accent, faint := m.styles.accent.Render("▸"), m.styles.faint.Render("▸")
	for range numFocus {
		got := m.View()
		for _, p := range []struct {
			f   focus
			row string
		}{{focusEndpoints, "alchemy"}, {focusMethods, "(all methods)"}} {
			want := faint
			if p.f == m.focus {
				want = accent
			}
			line := lineWith(got, p.row)
			if !strings.HasPrefix(line, want) {
				t.Errorf("focus on panel %d: the cursor on %s is not %q: %q", m.focus, p.row, want, line)
			}
		}
		m = pressKeys(m, "tab")
	}
}

// sameButMarker: a and b have the same width and words, ▶ aside, and their
// second word (the second column) starts in the same cell.
func sameButMarker(a, b string) bool {
	fields := func(s string) []string { return strings.Fields(strings.ReplaceAll(s, "▶", "")) }
	second := func(s string) int {
		f := fields(s)
		if len(f) < 2 {
			return -1
		}
		s = strings.ReplaceAll(s, "▶", " ")
		return lipgloss.Width(s[:strings.Index(s, " "+f[1])])
	}
	return lipgloss.Width(a) == lipgloss.Width(b) && slices.Equal(fields(a), fields(b)) && second(a) == second(b)
}
