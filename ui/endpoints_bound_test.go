package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/rpcdash/rpcdash/themes"
)

// A latency percentile that censoring leaves a lower bound (the hedged
// endpoint's slow primaries were cut short) is drawn "≥" before the
// figure, in the column's own 6 cells: the table does not move.
func TestEndpoints_LowerBoundLatencyIsMarkedInPlace(t *testing.T) {
	for _, c := range []struct {
		d     time.Duration
		lower bool
		want  string
	}{
		{131 * time.Millisecond, true, "≥131ms"},
		{131 * time.Millisecond, false, " 131ms"},
		{1250 * time.Millisecond, true, "≥1.25s"},
		{4500 * time.Microsecond, true, "≥4.5ms"},
		{0, true, "     —"},
	} {
		if got := boundMS(c.d, c.lower); got != c.want || lipgloss.Width(got) != 6 {
			t.Errorf("boundMS(%v, %v) = %q, want %q in 6 cells", c.d, c.lower, got, c.want)
		}
	}
	th, err := themes.Load(themes.Names()[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, sz := range goldenSizes {
		tail := fixedModel(hedgedTailSnapshot(), th, sz[0], sz[1]).View()
		plain := fixedModel(healthySnapshot(), th, sz[0], sz[1]).View()
		row := func(view, name string) string {
			for _, l := range strings.Split(view, "\n") {
				if strings.Contains(l, name) && strings.Contains(l, "closed") {
					return l
				}
			}
			t.Fatalf("%dx%d: no row for %s in\n%s", sz[0], sz[1], name, view)
			return ""
		}
		a := row(tail, "alchemy")
		if !strings.Contains(a, "≥131ms") {
			t.Errorf("%dx%d: alchemy's p95 is a lower bound, want ≥131ms in its row: %q", sz[0], sz[1], a)
		}
		// The cell ends in the column where the plain figure ends.
		end := func(s, cell string) int { return lipgloss.Width(s[:strings.Index(s, cell)+len(cell)]) }
		if p := row(plain, "alchemy"); lipgloss.Width(a) != lipgloss.Width(p) || end(a, "≥131ms") != end(p, "  95ms") {
			t.Errorf("%dx%d: the bound moved the row:\n%q\n%q", sz[0], sz[1], a, p)
		}
		if q := row(tail, "quicknode"); strings.Contains(q, "≥") || !strings.Contains(q, "1.25s") {
			t.Errorf("%dx%d: quicknode's p95 1.25s is no bound: %q", sz[0], sz[1], q)
		}
	}
}
