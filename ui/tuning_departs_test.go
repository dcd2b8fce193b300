package ui

import (
	"strings"
	"testing"
	"time"
)

// A measured p99 apart from the prediction is "departs" either way, but
// only one above it is what a shared cause does (hedges meeting the same
// slowness: the model was optimistic). One below it says the distribution
// the prediction rested on has changed since (routing settled on a faster
// endpoint after the window filled): seen on the binary, predicted 118 ms
// [110–138], measured 95.7 ms [88.6–108], and the view warned "the
// endpoints are not independent: the model is optimistic" over a pool with
// no shared-fate warning.
func TestTuningView_AFasterDepartureIsNotCalledOptimistic(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name                    string
		measured, low, high     time.Duration
		departs, wantOptimistic bool
	}{
		{"slower", 610 * ms, 540 * ms, 690 * ms, true, true},
		{"faster", 120 * ms, 112 * ms, 128 * ms, true, false},
		{"within", 174 * ms, 166 * ms, 183 * ms, false, false},
	} {
		md := withTrial(tuningDistribution(), false)
		md.Trial.Measured, md.Trial.MeasuredLow, md.Trial.MeasuredHigh, md.Trial.Departs = tc.measured, tc.low, tc.high, tc.departs
		got := tuningModel(healthySnapshot(), md, 120, 36).View()
		if optimistic := strings.Contains(got, "optimistic"); optimistic != tc.wantOptimistic {
			t.Errorf("%s: measured %s [%s–%s] against 170ms [163–178]: says the model is optimistic %v, want %v:\n%s",
				tc.name, tc.measured, tc.low, tc.high, optimistic, tc.wantOptimistic, got)
		}
		if tc.departs && !strings.Contains(got, "departs from the prediction") {
			t.Errorf("%s: lacks the departure:\n%s", tc.name, got)
		}
		checkFits(t, tuningModel(healthySnapshot(), md, 80, 24).View(), 80, 24)
	}
}

// A prediction that censoring left a lower bound reads "≥" with its
// words (it read "no prediction (nothing to forecast from then)"); a
// measurement below it departs, faster, never "optimistic".
func TestTuningView_ALowerBoundPredictionReadsAsOne(t *testing.T) {
	ms := time.Millisecond
	md := withTrial(tuningDistribution(), false)
	tr := md.Trial
	tr.Predicted, tr.PredictedLow, tr.PredictedHigh, tr.PredictedLowerBound = 133*ms, 133*ms, 0, true
	tr.Measured, tr.MeasuredLow, tr.MeasuredHigh, tr.Departs = 95*ms, 90*ms, 101*ms, true
	got := strings.Join(strings.Fields(tuningModel(healthySnapshot(), md, 120, 36).View()), " ")
	if !strings.Contains(got, "predicted p99 ≥133ms (a lower bound), measured 95ms [90ms–101ms]") ||
		!strings.Contains(got, "departs from the prediction, faster") || strings.Contains(got, "optimistic") {
		t.Errorf("the trial line:\n%s", got)
	}
}
