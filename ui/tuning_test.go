package ui

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
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
		{"tuning", healthySnapshot(), md, []string{"uning · eth_getBalance", "auto p95", "◀ now", "★ best", "capped", "cut short"}},
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
				if hist := histogramLines.MatchString(got); hist == (sz[0] >= 100) {
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
	// Unhedged, the tail past the hedges that won is known only as "longer
	// than": the p99 is a lower bound, and such a row is never best.
	if off := rows[1]; off.spec != "off" || !off.policy.off || off.f.FireRate != 0 || off.f.ExtraLoad != 0 || !off.f.Open[2] {
		t.Fatalf("second row %q: want hedging off, no hedges, its p99 a lower bound: %+v", off.label(), off.f)
	}
	p50, _ := md.Primary.Quantile(0.5)
	for _, r := range rows {
		if r.spec == "current" || r.spec == "off" || strings.HasPrefix(r.spec, "auto") {
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
		// A lower bound is no predicted p99 to weigh: the unhedged row's
		// is the low end of its interval (too few answers past it).
		if !r.f.BudgetCapped && !r.f.Open[2] && float64(r.f.P99)*(1+bestP99Slack) < float64(rows[best].f.P99) {
			t.Errorf("row %d (%s) has a p99 %s within the budget more than 5 %% below the recommended %s", i, r.label(), r.f.P99, rows[best].f.P99)
		}
	}
	if p80 := rows[slices.IndexFunc(rows, func(r tuningRow) bool { return r.spec == "auto:0.8" })]; !p80.f.BudgetCapped { // ~20 % of requests want a hedge, twice the budget
		t.Errorf("auto p80 not capped: %+v", p80.f)
	}
}

// A p99 lower by a hair is not worth more hedges: of two rows within 5 %
// of the lowest p99, the one with less extra load is best (before, 0.2 ms
// of predicted p99 bought twice the hedges).
func TestTuningRows_BestWeighsTheP99AgainstItsCost(t *testing.T) {
	row := func(p99 time.Duration, extra float64, capped bool) tuningRow {
		return tuningRow{f: engine.HedgeForecast{Samples: 500, P99: p99, ExtraLoad: extra, BudgetCapped: capped}}
	}
	for _, tc := range []struct {
		name string
		rows []tuningRow
		want int
	}{
		{"a hair lower p99 at twice the load", []tuningRow{row(100*time.Millisecond, 0.10, false), row(100200*time.Microsecond, 0.05, false)}, 1},
		{"a clearly lower p99", []tuningRow{row(100*time.Millisecond, 0.10, false), row(120*time.Millisecond, 0.05, false)}, 0},
		{"the cheaper one capped", []tuningRow{row(100*time.Millisecond, 0.10, false), row(101*time.Millisecond, 0.30, true)}, 0},
		{"equal load, the lower p99", []tuningRow{row(103*time.Millisecond, 0.05, false), row(100*time.Millisecond, 0.05, false)}, 1},
	} {
		if got := (tuningView{rows: tc.rows}).recommended(); got != tc.want {
			t.Errorf("%s: best row %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Hedging off is the baseline each delay's p99 is weighed against: where
// hedging buys no p99 worth its load (a method without a tail), off is
// the best row; where it does (the seeds' tail), a delay is.
func TestTuningRows_OffIsBestWhereHedgingBuysNoP99(t *testing.T) {
	// Hedged at its p95 (46 ms) as auto would, the primaries a winning
	// hedge cut short censored, as the engine records them.
	r := rand.New(rand.NewPCG(7, 1))
	draw := func() time.Duration {
		return time.Duration(float64(40*time.Millisecond) * math.Exp(0.1*r.NormFloat64()))
	}
	const delay = 47 * time.Millisecond
	var exact, censored []time.Duration
	for range 5000 {
		x := draw()
		if won := delay + draw(); x > delay && won < x {
			censored = append(censored, won)
			continue
		}
		exact = append(exact, x)
	}
	p := engine.DistributionOf(exact, censored)
	auto, _ := p.DelayQuantile(0.95)
	flat := engine.MethodDistribution{Method: "eth_blockNumber", Window: 5 * time.Minute, Primary: p,
		Targets: []engine.HedgeTarget{{Endpoint: "beta", Weight: 250, Dist: p}},
		Hedge:   engine.MethodHedgeSettings{Enabled: true, Delay: auto, Source: "auto", Quantile: 0.95, MaxExtra: 1, Budget: 0.1, BudgetBurst: 10}}
	for _, tc := range []struct {
		name    string
		md      engine.MethodDistribution
		wantOff bool
	}{{"no tail", flat, true}, {"the seeds' tail", tuningDistribution(), false}} {
		v := tuningView{rows: forecastRows(tc.md)}
		best := v.recommended()
		if best < 0 {
			t.Fatalf("%s: no best row", tc.name)
		}
		if got := v.rows[best].policy.off; got != tc.wantOff {
			t.Errorf("%s: best row %q (p99 %s, extra %.3f), want hedging off %v; rows %v", tc.name, v.rows[best].label(), v.rows[best].f.P99, v.rows[best].f.ExtraLoad, tc.wantOff, rowSummary(v.rows))
		}
	}
	m := tuningModel(healthySnapshot(), flat, 120, 36)
	if view := m.View(); !regexp.MustCompile(`off  hedging off +0%.*\+0%.*★ best`).MatchString(view) {
		t.Errorf("the off row is not shown as best:\n%s", view)
	}
	// Highlighted, the off row draws no delay line: its delay of 0 drew
	// one at 0s, stretching the plot's log axis down to a microsecond.
	m.tuning.cursor = slices.IndexFunc(m.tuning.rows, func(r tuningRow) bool { return r.policy.off })
	if view := ansi.Strip(m.View()); strings.Contains(view, "highlighted") || strings.Contains(view, "µs") {
		t.Errorf("the off row highlighted:\n%s", view)
	}
	// Hedging off already: the current row is the baseline, and at 80
	// columns its marks keep the star ("◀ now · …" lost it).
	flat.Hedge.Enabled = false
	m = tuningModel(healthySnapshot(), flat, 80, 24)
	view := ansi.Strip(m.View())
	checkFits(t, view, 80, 24)
	if !regexp.MustCompile(`off  current: hedging off .*◀ ★`).MatchString(view) || strings.Contains(view, "off  hedging off") {
		t.Errorf("hedging off, at 80 columns:\n%s", view)
	}
}

func rowSummary(rows []tuningRow) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "[%s p99 %s extra %.3f] ", r.label(), r.f.P99, r.f.ExtraLoad)
	}
	return b.String()
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

// tuningNotes are notes as the engine gives them for a censored window.
var tuningNotes = []string{
	"no hedges sent in the window: duplicates are modelled on the primaries' distribution",
	"censoring dominates past 133ms (most primaries cut short by hedges before it, too few answers after): figures past it are lower bounds, and auto picks no delay past it",
}

// histogramRow is a line of the view's histogram: a label "lo–hi" then a bar.
var (
	histogramRow   = regexp.MustCompile(`^\s*([0-9.]+m?s)–([0-9.]+m?s) `)
	histogramLines = regexp.MustCompile(`(?m)^\s*([0-9.]+m?s)–([0-9.]+m?s) `)
)

// At 80×24 the view cut its notes mid-sentence with nothing to say so
// ("…the model is optimistic (shared-fate" / "warnings in the pool; …
// departs from the"), and the histogram folded down to a bucket such as
// 50ms–2.00s with the delay somewhere inside (with a PANIC banner, two
// buckets in all). Now a note is whole or cut with "…" and a line saying
// how many more; the histogram keeps minHistRows, and the delay's bucket
// spans at most maxDelayBucketSpan.
func TestTuningView_SmallTerminalNeitherClipsSilentlyNorHidesTheDelay(t *testing.T) {
	panicky := sharedFateSnapshot()
	panicky.Panic, panicky.PanicReason = true, "1 of 3 endpoints routable, below router.panic_threshold 0.50"
	panicky.Endpoints[0].Routable, panicky.Endpoints[1].Routable, panicky.Routable = false, false, 1
	for _, delay := range []time.Duration{120 * time.Millisecond, 565 * time.Millisecond, 2 * time.Second, 5 * time.Millisecond} {
		for _, snap := range []engine.Snapshot{sharedFateSnapshot(), panicky} {
			for _, sz := range [][2]int{{80, 24}, {80, 27}, {100, 24}, {120, 30}} {
				name := fmt.Sprintf("delay %s, panic %v, %dx%d", delay, snap.Panic, sz[0], sz[1])
				md := withTrial(tuningDistribution(), true)
				md.Hedge.Delay = delay
				m := tuningModel(snap, md, sz[0], sz[1])
				m.tuning.notes = tuningNotes
				v := ansi.Strip(m.View())
				checkFits(t, v, sz[0], sz[1])
				if strings.Contains(v, "━━") {
					continue // the percentile plot, not the histogram
				}
				var buckets int
				for _, l := range strings.Split(v, "\n") {
					g := histogramRow.FindStringSubmatch(l)
					if g == nil {
						continue
					}
					buckets++
					if !strings.Contains(l, "◀ delay") {
						continue
					}
					lo, _ := time.ParseDuration(g[1])
					hi, _ := time.ParseDuration(g[2])
					if hi > maxDelayBucketSpan*lo || delay < lo || delay >= hi {
						t.Errorf("%s: the delay's bucket %s–%s:\n%s", name, lo, hi, v)
					}
				}
				if buckets < 3 || !strings.Contains(v, "◀ delay "+fmtDelay(delay)) {
					t.Errorf("%s: %d buckets, the delay marked %v:\n%s", name, buckets, strings.Contains(v, "◀ delay"), v)
				}
				// Each note is on screen whole, or the foot says more
				// lines are left out.
				flat := strings.Join(strings.Fields(v), " ")
				cut := strings.Contains(v, "more lines (a taller terminal shows them)") || strings.Contains(v, "more line (a taller terminal shows them)")
				for _, n := range append([]string{"⚠ the endpoints are not independent: the model is optimistic (shared-fate warnings in the pool; the measured p99 departs from the prediction beyond its confidence)"}, tuningNotes...) {
					if !strings.Contains(flat, n) && !cut {
						t.Errorf("%s: note neither whole nor said to be cut: %q\n%s", name, n, v)
					}
				}
			}
		}
	}
}

// A foot cut mid-item ends that item's last line in "…" and says how many
// lines are left out.
func TestTuningFoot_ClipSaysSo(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 80, 24)
	items := [][]string{{"one"}, {"two a", "two b", "two c"}, {"three"}}
	got := m.clipFoot(items, 20, 3)
	if len(got) != 3 || strings.TrimSpace(got[1]) != "two a …" || !strings.Contains(got[2], "… 3 more lines") {
		t.Fatalf("clipped: %q", got)
	}
	if got := m.clipFoot(items, 20, 5); len(got) != 5 || strings.TrimSpace(got[4]) != "three" {
		t.Fatalf("fits: %q", got)
	}
}

// A trial whose hedges the budget did not send says so, not "the model
// holds": the prediction assumed them.
func TestTuningView_ATrialTheBudgetDidNotHedgeSaysSo(t *testing.T) {
	md := withTrial(tuningDistribution(), false)
	md.Trial.BudgetRefused, md.Trial.HedgesFired = 407, 0
	for _, sz := range [][2]int{{120, 36}, {80, 24}} {
		got := ansi.Strip(tuningModel(healthySnapshot(), md, sz[0], sz[1]).View())
		checkFits(t, got, sz[0], sz[1])
		flat := strings.Join(strings.Fields(got), " ")
		if strings.Contains(flat, "the model holds") || !strings.Contains(flat, "407 hedges due were not sent") {
			t.Errorf("%dx%d, 407 hedges refused for the budget and none sent:\n%s", sz[0], sz[1], got)
		}
	}
}
