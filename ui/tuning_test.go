package ui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// The tuning view at a wide terminal (the percentile plot) and at 80×24
// (the log-bucket histogram): before any change, after one the model
// held, and after one it did not, in a pool with shared-fate warnings.
func TestTuningView_Goldens(t *testing.T) {
	md := tuningDistribution()
	for _, tc := range []struct {
		name string
		snap engine.Snapshot
		md   engine.MethodDistribution
		want []string
	}{
		{"tuning", healthySnapshot(), md, []string{"Hedge tuning · eth_getBalance", "auto p95", "◀ now", "★ best", "capped", "cut short"}},
		{"tuning-after-change", healthySnapshot(), withTrial(md, false), []string{"since the change 1m20s ago", "predicted p99 170ms", "measured 174ms", "over 2345", "the model holds"}},
		{"tuning-departs", sharedFateSnapshot(), withTrial(md, true), []string{"departs from the prediction", "not independent", "optimistic"}},
	} {
		for _, sz := range [][2]int{{120, 36}, {80, 24}} {
			name := fmt.Sprintf("%s_%dx%d", tc.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				got := tuningModel(tc.snap, tc.md, sz[0], sz[1]).View()
				checkFits(t, got, sz[0], sz[1])
				golden(t, filepath.Join("testdata", name+".golden"), got)
				for _, w := range tc.want {
					if !strings.Contains(got, w) {
						t.Errorf("lacks %q:\n%s", w, got)
					}
				}
				plot := strings.Contains(got, "p99.9") && strings.Contains(got, "━━")
				if wide := sz[0] >= 100; plot != wide {
					t.Errorf("%dx%d: percentile plot shown %v:\n%s", sz[0], sz[1], plot, got)
				}
				if hist := strings.Contains(got, "30ms–50ms"); hist == (sz[0] >= 100) {
					t.Errorf("%dx%d: histogram shown %v:\n%s", sz[0], sz[1], hist, got)
				}
			})
		}
	}
}

// The view fits every terminal size between the goldens'.
func TestTuningView_NeverExceedsTheTerminal(t *testing.T) {
	md := withTrial(tuningDistribution(), true)
	for w := 80; w <= 170; w += 9 {
		for h := 24; h <= 50; h += 5 {
			checkFits(t, tuningModel(sharedFateSnapshot(), md, w, h).View(), w, h)
		}
	}
	// Before the first answer, and with nothing in the window.
	m := tuningModel(healthySnapshot(), md, 80, 24)
	m.tuning = tuningView{method: "eth_getBalance"}
	if got := m.View(); !strings.Contains(got, "reading the distribution of eth_getBalance") {
		t.Errorf("before the first answer:\n%s", got)
	}
	empty := engine.MethodDistribution{Method: "eth_getBalance", Hedge: engine.MethodHedgeSettings{Enabled: true, Delay: 250 * time.Millisecond, Source: "cold", Quantile: 0.95, MaxExtra: 1, Budget: 0.1}}
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		got := tuningModel(healthySnapshot(), empty, sz[0], sz[1]).View()
		checkFits(t, got, sz[0], sz[1])
		if !strings.Contains(got, "no primaries in the window yet") && !strings.Contains(got, "no answered primaries") {
			t.Errorf("empty window at %v:\n%s", sz, got)
		}
	}
}

// The rows: current first, the auto quantiles, round values inside the
// p50–p99.9; equal delays folded; the recommended one the lowest p99 the
// budget does not cap.
func TestTuningRows_CandidatesAndRecommendation(t *testing.T) {
	md := tuningDistribution()
	rows := forecastRows(md)
	if rows[0].label() != "current = auto p95" || !rows[0].policy.current {
		t.Fatalf("first row %q", rows[0].label())
	}
	p50, _ := md.Primary.Quantile(0.5)
	for _, r := range rows {
		if r.spec == "current" || strings.HasPrefix(r.spec, "auto") {
			continue
		}
		if d, _ := time.ParseDuration(r.spec); d < p50 {
			t.Errorf("round value %s below the p50 %s", d, p50)
		}
	}
	v := tuningView{rows: rows}
	best := v.recommended()
	if best < 0 {
		t.Fatal("no recommendation")
	}
	for i, r := range rows {
		if !r.f.BudgetCapped && r.f.P99 < rows[best].f.P99 {
			t.Errorf("row %d (%s) has a lower p99 %s within the budget than the recommended %s", i, r.label(), r.f.P99, rows[best].f.P99)
		}
	}
	if !rows[1].f.BudgetCapped { // auto p80 wants ~20 % of requests, twice the budget
		t.Errorf("auto p80 not capped: %+v", rows[1].f)
	}
}

// Read-only, the tuning view's help bar offers neither enter (apply) nor
// a (auto): both are off there.
func TestView_TuningHelpBarReadOnlyOffersNoApply(t *testing.T) {
	m := tuningModel(healthySnapshot(), tuningDistribution(), 120, 36)
	m.opts.ReadOnly, m.keys = true, newKeyMap(true)
	bar := m.helpBar()
	for _, off := range []string{"apply", "auto"} {
		if strings.Contains(bar, off) {
			t.Errorf("read-only tuning help bar offers %q: %q", off, bar)
		}
	}
	if !strings.Contains(bar, "READ-ONLY") {
		t.Errorf("read-only tuning help bar does not say so: %q", bar)
	}
}
