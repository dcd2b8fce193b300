package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Upstream batches hedge at a delay of their own, learnt from their round
// trips (hedge.batch_delay_ms): the methods panel's title says it once it
// is known, within the panel's width at every size, and says nothing while
// it is not, or when no delay is learnt (hedging off, a fixed delay).
func TestView_MethodsTitleShowsTheBatchDelayOnceLearnt(t *testing.T) {
	const said = "batches hedge at 85ms (p95 of 40 round trips)"
	learnt := healthySnapshot()
	learnt.Hedge.BatchDelay, learnt.Hedge.BatchRoundTrips = 85*time.Millisecond, 40
	off := learnt
	off.Hedge.Enabled = false
	fixed := learnt
	fixed.Hedge.Delay = 120 * time.Millisecond
	for _, tc := range []struct {
		name string
		snap engine.Snapshot
		want bool
	}{
		{"learnt", learnt, true},
		{"not yet", healthySnapshot(), false},
		{"hedging off", off, false},
		{"a fixed delay", fixed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fixedModel(tc.snap, themes.Default(), 120, 36).View()
			checkFits(t, got, 120, 36)
			if strings.Contains(got, said) != tc.want {
				t.Errorf("120×36 shows %q: %v, want %v\n%s", said, !tc.want, tc.want, got)
			}
		})
	}
	// Beside the detail panel too, the title fits in the panel's frame, at
	// the longest its figures make it.
	learnt.Hedge.Quantile, learnt.Hedge.BatchDelay, learnt.Hedge.BatchRoundTrips = 0.999, 1250*time.Millisecond, 1_234_567
	for _, size := range [][2]int{{100, 30}, {120, 36}, {150, 40}, {160, 40}} {
		w, h := size[0], size[1]
		m := fixedModel(learnt, themes.Default(), w, h)
		m.focus = focusMethods // "▶ " widens the title
		got := m.View()
		checkFits(t, got, w, h)
		// "last 1m · " goes first where the whole title would not fit.
		if !strings.Contains(got, "▶ Methods · batches hedge at 1.25s (p99.9 of 1234567 round trips)") &&
			!strings.Contains(got, "▶ Methods · last 1m · batches hedge at 1.25s (p99.9 of 1234567 round trips)") {
			t.Errorf("%d×%d lost the methods panel's title:\n%s", w, h, got)
		}
	}
}
