package engine_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// hedgedWindows replays n requests hedged at d0 (the primary from lat, the
// duplicate from lat too) the way the engine records its primaries: exact
// when the primary answered first, censored at the moment it was cancelled
// when the duplicate won. It returns that window, the window of every
// primary's full latency (what no hedging would have shown), and the
// censored window with its censored points dropped.
func hedgedWindows(lat latencyModel, d0 time.Duration, n int, seed uint64) (censored, full, dropped *window.Latency) {
	r := rand.New(rand.NewPCG(seed, 3))
	censored, full, dropped = newWindow(), newWindow(), newWindow()
	for range n {
		x := lat(r)
		full.Record(x)
		if x > d0 {
			if won := d0 + lat(r); won < x {
				censored.RecordCensored(won)
				continue
			}
		}
		censored.Record(x)
		dropped.Record(x)
	}
	return censored, full, dropped
}

// A window whose slow primaries were cut short by winning hedges, recorded
// censored, forecasts what the full uncensored distribution forecasts;
// dropping the censored points loses most of the tail, and its forecast
// (and its auto delay) come out far too low.
func TestForecast_CensoredWindowMatchesTheFullDistribution(t *testing.T) {
	cw, fw, dw := hedgedWindows(seedsTail, 80*time.Millisecond, 400_000, 21)
	c, f, d := engine.WindowDistribution(cw), engine.WindowDistribution(fw), engine.WindowDistribution(dw)
	if c.Censored < c.Samples()/50 {
		t.Fatalf("only %d of %d censored: the test needs hedges that won", c.Censored, c.Samples())
	}
	t.Logf("window: %d exact, %d censored", c.Exact, c.Censored)
	// The unhedged p99 lies in the 500–1000 ms tail, which the censored
	// window knows only from the few hundred slow primaries whose hedge
	// was slow too: an unbiased estimate, but a noisier one.
	for _, c2 := range []struct{ q, tol float64 }{{0.9, 0.02}, {0.95, 0.02}, {0.99, 0.1}} {
		cq, _ := c.Quantile(c2.q)
		fq, _ := f.Quantile(c2.q)
		dq, _ := d.Quantile(c2.q)
		t.Logf("auto p%g: censored window %s, full %s, censored dropped %s", 100*c2.q, cq, fq, dq)
		if !within(cq, fq, c2.tol) {
			t.Errorf("p%g of the censored window %s, of the full distribution %s", 100*c2.q, cq, fq)
		}
	}
	worst := 0.0
	for _, delay := range []time.Duration{50 * time.Millisecond, 80 * time.Millisecond, 120 * time.Millisecond, 200 * time.Millisecond} {
		in := engine.ForecastInput{Delay: delay, MaxExtra: 1, Budget: 1, Burst: 10}
		in.Primary = c
		fc := engine.Forecast(in)
		in.Primary = f
		ff := engine.Forecast(in)
		in.Primary = d
		fd := engine.Forecast(in)
		t.Logf("delay %s: p99 censored %s, full %s, dropped %s; fire %.4f / %.4f / %.4f",
			delay, fc.P99, ff.P99, fd.P99, fc.FireRate, ff.FireRate, fd.FireRate)
		if !within(fc.P99, ff.P99, 0.03) || !within(fc.P95, ff.P95, 0.03) || math.Abs(fc.FireRate-ff.FireRate) > 0.003 {
			t.Errorf("delay %s: censored window forecasts p95 %s p99 %s fire %.4f, full distribution p95 %s p99 %s fire %.4f",
				delay, fc.P95, fc.P99, fc.FireRate, ff.P95, ff.P99, ff.FireRate)
		}
		worst = max(worst, float64(ff.P99-fd.P99)/float64(ff.P99))
	}
	// Without the censored points the tail is gone: the forecast p99 is at
	// least a fifth too low at some delay.
	if worst < 0.2 {
		t.Errorf("dropping the censored points moved the forecast p99 by at most %.0f%%: the test shows nothing", 100*worst)
	}
	dp99, _ := d.Quantile(0.99)
	fp99, _ := f.Quantile(0.99)
	if dp99*2 > fp99 {
		t.Errorf("dropped censoring: unhedged p99 %s, full %s: expected far lower", dp99, fp99)
	}
}

// The exported survival curve is the one the auto delay reads: its
// quantiles are QuantileCensored's, DelayQuantile's and the Summary's,
// bucket for bucket, with and without censoring, and where censoring
// dominates the tail (hedges at 15 ms cut most of it short). The window
// and the Distribution compute the curve apart, so each checks the other.
func TestDistribution_QuantilesAreTheAutoDelays(t *testing.T) {
	cw, fw, _ := hedgedWindows(seedsTail, 80*time.Millisecond, 50_000, 22)
	dw, _, _ := hedgedWindows(seedsTail, 15*time.Millisecond, 2_000, 23)
	for name, w := range map[string]*window.Latency{"censored": cw, "exact only": fw, "mostly censored": dw} {
		d := engine.WindowDistribution(w)
		for _, q := range []float64{0.5, 0.8, 0.9, 0.95, 0.99, 0.999} {
			got, _ := d.Quantile(q)
			if want := w.QuantileCensored(q); got != want {
				t.Errorf("%s: q%v: distribution %s, QuantileCensored %s", name, q, got, want)
			}
			if got, want := w.DelayQuantile(q), firstOf(d.DelayQuantile(q)); got != want {
				t.Errorf("%s: q%v: DelayQuantile %s, the distribution's %s", name, q, got, want)
			}
		}
		horizon, dominated := d.Horizon()
		sum := w.Summary()
		shown := []time.Duration{sum.P50, sum.P90, sum.P95, sum.P99, sum.P999}
		for i, q := range window.SummaryQuantiles {
			want, ok := d.Quantile(q)
			open := !ok || dominated && want > horizon
			switch {
			case open && dominated:
				want = horizon
			case open:
				want = d.Max()
			}
			if shown[i] != want || sum.Open[i] != open {
				t.Errorf("%s: q%v: Summary %s (lower bound %v), the distribution's %s (%v); horizon %s, dominated %v",
					name, q, shown[i], sum.Open[i], want, open, horizon, dominated)
			}
		}
		if name == "mostly censored" && !dominated {
			t.Errorf("%s: censoring never dominates (%d exact, %d censored): the case shows nothing", name, d.Exact, d.Censored)
		}
		exact, cens := w.Counts()
		var be, bc int64
		for _, b := range d.Buckets {
			be += b.Exact
			bc += b.Censored
			if b.Low > b.High {
				t.Fatalf("bucket %v", b)
			}
		}
		if d.Exact != exact || d.Censored != cens || be != exact || bc != cens {
			t.Errorf("%s: counts %d/%d, buckets %d/%d, window %d/%d", name, d.Exact, d.Censored, be, bc, exact, cens)
		}
		for i := 1; i < len(d.Survival); i++ {
			if d.Survival[i].S > d.Survival[i-1].S || d.Survival[i].At <= d.Survival[i-1].At {
				t.Fatalf("%s: survival not a decreasing step function at %d: %v %v", name, i, d.Survival[i-1], d.Survival[i])
			}
		}
	}
}

// Every observation censored: no exact one to step at, so no quantile is
// resolved and the largest observation is the lower bound.
func TestDistribution_AllCensoredResolvesNothing(t *testing.T) {
	w := newWindow()
	for i := range 50 {
		w.RecordCensored(time.Duration(100+i) * time.Millisecond)
	}
	d := engine.WindowDistribution(w)
	if len(d.Survival) != 0 || d.SurvivalAt(time.Hour) != 1 {
		t.Fatalf("survival %v", d.Survival)
	}
	if v, ok := d.Quantile(0.5); ok || v < 149*time.Millisecond {
		t.Errorf("median %s %v: want unresolved, at least the largest observation", v, ok)
	}
	if f := engine.Forecast(engine.ForecastInput{Primary: d, Delay: 50 * time.Millisecond, MaxExtra: 1, Budget: 1, Burst: 1}); f.P99 != 0 {
		t.Errorf("a forecast from nothing exact: %+v", f)
	}
}

// censoringDominatedWindow is the audit's window after a fixed 0s delay:
// answers of 10–80 ms, then many primaries cut short at 81–82 ms by
// hedges that won, and one answer at 2 s above them. The product-limit
// curve hands that one answer the mass of everything cut short.
func censoringDominatedWindow() *window.Latency {
	w := newWindow()
	for i := range 100 {
		w.Record(time.Duration(10+i*70/100) * time.Millisecond)
	}
	for i := range 150 {
		w.RecordCensored(81*time.Millisecond + time.Duration(i)*5*time.Microsecond)
	}
	w.Record(2 * time.Second)
	return w
}

// Where censoring dominates, the auto delay stops at the last answer
// before it (never the lone answer above the censored mass), the live
// window and the exported distribution agree on it, and the forecast's
// figures past it are lower bounds at it, with a note.
func TestDistribution_AutoDelayStopsWhereCensoringDominates(t *testing.T) {
	w := censoringDominatedWindow()
	d := engine.WindowDistribution(w)
	km := w.QuantileCensored(0.95)
	live := w.DelayQuantile(0.95)
	shown, ok := d.DelayQuantile(0.95)
	h, dominated := d.Horizon()
	t.Logf("product-limit p95 %s; delay quantile live %s, distribution %s (ok %v); horizon %s dominated %v", km, live, shown, ok, h, dominated)
	if km < time.Second {
		t.Fatalf("the fixture no longer shows the problem: product-limit p95 %s", km)
	}
	if !dominated || h > 81*time.Millisecond || h < 79*time.Millisecond {
		t.Errorf("horizon %s dominated %v, want the last answer before the censored mass (~80 ms)", h, dominated)
	}
	if live != h || shown != h || ok {
		t.Errorf("delay quantile live %s, distribution %s (ok %v); want both the horizon %s, not ok", live, shown, ok, h)
	}
	f := engine.Forecast(engine.ForecastInput{Primary: d, Delay: 2 * time.Second, MaxExtra: 1, Budget: 1, Burst: 1})
	if f.P99 > h || !f.Open[2] || f.P999 > h || !f.Open[3] {
		t.Errorf("forecast at a 2 s delay: p99 %s (open %v), p99.9 %s (open %v); want at most the horizon %s, marked lower bounds", f.P99, f.Open[2], f.P999, f.Open[3], h)
	}
}

// Under ordinary hedging (a few per cent of primaries cut short, all above
// the delay) the far tail is mostly cut short too, but dozens of answers
// carry it: through p99 the delay quantile is the product-limit quantile,
// as before.
func TestDistribution_DelayQuantileIsTheProductLimitOneUnderOrdinaryHedging(t *testing.T) {
	cw, _, _ := hedgedWindows(seedsTail, 80*time.Millisecond, 50_000, 22)
	d := engine.WindowDistribution(cw)
	h, dominated := d.Horizon()
	t.Logf("horizon %s dominated %v; p95 %s p99 %s p99.9 %s; exact %d censored %d", h, dominated, cw.QuantileCensored(0.95), cw.QuantileCensored(0.99), cw.QuantileCensored(0.999), d.Exact, d.Censored)
	if h < cw.QuantileCensored(0.99) {
		t.Errorf("horizon %s below the product-limit p99", h)
	}
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
		live, km := cw.DelayQuantile(q), cw.QuantileCensored(q)
		shown, _ := d.DelayQuantile(q)
		if live != km || shown != km {
			t.Errorf("q%v: live %s, distribution %s, product-limit %s", q, live, shown, km)
		}
	}
}

func firstOf[T any](v T, _ bool) T { return v }
