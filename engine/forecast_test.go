package engine_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// latencyModel draws one service time.
type latencyModel func(r *rand.Rand) time.Duration

// lognormal is the seeds' body: median m, σ; with probability tail a time
// uniform in [lo, hi] instead.
func lognormal(m time.Duration, sigma, tail float64, lo, hi time.Duration) latencyModel {
	return func(r *rand.Rand) time.Duration {
		if tail > 0 && r.Float64() < tail {
			return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
		}
		return time.Duration(float64(m) * math.Exp(sigma*r.NormFloat64()))
	}
}

// paretoTail is a lognormal body with a share tail of Pareto times (scale
// xm, shape alpha): a tail with no upper end, capped at a minute.
func paretoTail(m time.Duration, sigma, tail float64, xm time.Duration, alpha float64) latencyModel {
	return func(r *rand.Rand) time.Duration {
		if r.Float64() < tail {
			return min(time.Duration(float64(xm)/math.Pow(1-r.Float64(), 1/alpha)), time.Minute)
		}
		return time.Duration(float64(m) * math.Exp(sigma*r.NormFloat64()))
	}
}

// fixedClock keeps a window from rolling while a test fills it.
func fixedClock() func() time.Time {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { return t0 }
}

func newWindow() *window.Latency { return window.NewLatency(time.Hour, 1, fixedClock()) }

// distOf records n draws of lat in a latency window and exports it.
func distOf(lat latencyModel, n int, seed uint64) engine.Distribution {
	r := rand.New(rand.NewPCG(seed, 99))
	w := newWindow()
	for range n {
		w.Record(lat(r))
	}
	return engine.WindowDistribution(w)
}

// monteCarlo runs the mechanism itself on n requests arriving one per
// millisecond: a primary from P; while nothing has answered, duplicate j
// is due at j·d to a target drawn from H and goes if the token bucket
// allows (every arrival deposits budget, the bucket holds burst at most, a
// duplicate costs 1), and a refused duplicate ends the request's hedging.
// Deposits and withdrawals happen in time order, as in the engine. The
// request completes with its first answer.
type mcResult struct {
	sorted []time.Duration
	fired  int // requests that sent at least one duplicate
	extra  int // duplicates sent
}

func monteCarlo(p, h latencyModel, d time.Duration, maxExtra int, budget, burst float64, n int, seed uint64) mcResult {
	const gap = time.Millisecond
	r := rand.New(rand.NewPCG(seed, 7))
	done := make([]time.Duration, n) // completion, from arrival
	next := make([]int, maxExtra+1)  // per j, the next request whose duplicate j is due
	alive := make([]bool, n)         // still hedging (no duplicate refused)
	out := mcResult{}
	tokens := burst
	fire := func(j, i int) {
		due := time.Duration(j) * d
		if !alive[i] || done[i] <= due {
			return
		}
		if tokens < 1 {
			alive[i] = false
			return
		}
		tokens--
		out.extra++
		if j == 1 {
			out.fired++
		}
		done[i] = min(done[i], due+h(r))
	}
	// due returns when request i's duplicate j is due, absolute.
	due := func(j, i int) time.Duration { return time.Duration(i)*gap + time.Duration(j)*d }
	for i := 0; i <= n; i++ {
		now := time.Duration(i) * gap
		if i == n {
			now = time.Duration(math.MaxInt64)
		}
		for { // every duplicate due before this arrival, earliest first
			bj := -1
			for j := 1; j <= maxExtra; j++ {
				if next[j] < i && (bj < 0 || due(j, next[j]) < due(bj, next[bj])) {
					bj = j
				}
			}
			if bj < 0 || due(bj, next[bj]) > now {
				break
			}
			fire(bj, next[bj])
			next[bj]++
		}
		if i == n {
			break
		}
		tokens = min(tokens+budget, burst)
		done[i], alive[i] = p(r), true
	}
	out.sorted = done
	slices.Sort(out.sorted)
	return out
}

func (m mcResult) quantile(q float64) time.Duration {
	return m.sorted[int(math.Ceil(q*float64(len(m.sorted))))-1]
}

func within(got, want time.Duration, rel float64) bool {
	return math.Abs(float64(got-want)) <= rel*float64(want)
}

// checkAgainstMonteCarlo compares the forecast with 10^6 simulated
// requests: p99 within 2 %, p50 and p95 within 2 %, p99.9 within 5 % (a
// thousand requests past it), fire rate and extra load within half a
// percentage point.
func checkAgainstMonteCarlo(t *testing.T, f engine.HedgeForecast, mc mcResult) {
	t.Helper()
	n := float64(len(mc.sorted))
	for i, c := range []struct {
		name string
		got  time.Duration
		q    float64
		tol  float64
	}{{"p50", f.P50, 0.5, 0.02}, {"p95", f.P95, 0.95, 0.02}, {"p99", f.P99, 0.99, 0.02}, {"p99.9", f.P999, 0.999, 0.05}} {
		want := mc.quantile(c.q)
		if f.Open[i] || !within(c.got, want, c.tol) {
			t.Errorf("%s: forecast %s (open %v), Monte Carlo %s (tolerance %.0f%%)", c.name, c.got, f.Open[i], want, 100*c.tol)
		}
	}
	if fr := float64(mc.fired) / n; math.Abs(f.FireRate-fr) > 0.005 {
		t.Errorf("fire rate: forecast %.4f, Monte Carlo %.4f", f.FireRate, fr)
	}
	if ex := float64(mc.extra) / n; math.Abs(f.ExtraLoad-ex) > 0.005 {
		t.Errorf("extra load: forecast %.4f, Monte Carlo %.4f", f.ExtraLoad, ex)
	}
	t.Logf("delay %s: forecast p50 %s p95 %s p99 %s p99.9 %s fire %.4f extra %.4f capped %v | Monte Carlo p50 %s p95 %s p99 %s p99.9 %s fire %.4f extra %.4f",
		f.Delay, f.P50, f.P95, f.P99, f.P999, f.FireRate, f.ExtraLoad, f.BudgetCapped,
		mc.quantile(0.5), mc.quantile(0.95), mc.quantile(0.99), mc.quantile(0.999), float64(mc.fired)/n, float64(mc.extra)/n)
}

const mcSamples = 1_000_000

var (
	bodyOnly  = lognormal(50*time.Millisecond, 0.3, 0, 0, 0)
	seedsTail = lognormal(50*time.Millisecond, 0.3, 0.02, 500*time.Millisecond, time.Second)
	heavyTail = paretoTail(50*time.Millisecond, 0.3, 0.03, 150*time.Millisecond, 1.2)
)

func TestForecast_MatchesMonteCarloLognormal(t *testing.T) {
	p := distOf(bodyOnly, mcSamples, 1)
	for _, d := range []time.Duration{40 * time.Millisecond, 70 * time.Millisecond} {
		f := engine.Forecast(engine.ForecastInput{Primary: p, Delay: d, MaxExtra: 1, Budget: 1, Burst: 10})
		checkAgainstMonteCarlo(t, f, monteCarlo(bodyOnly, bodyOnly, d, 1, 1, 10, mcSamples, 2))
	}
}

func TestForecast_MatchesMonteCarloWithTheSeedsTail(t *testing.T) {
	p := distOf(seedsTail, mcSamples, 3)
	auto, ok := p.Quantile(0.95)
	if !ok {
		t.Fatal("no p95")
	}
	for _, d := range []time.Duration{auto, 120 * time.Millisecond} {
		f := engine.Forecast(engine.ForecastInput{Primary: p, Delay: d, MaxExtra: 1, Budget: 1, Burst: 10})
		checkAgainstMonteCarlo(t, f, monteCarlo(seedsTail, seedsTail, d, 1, 1, 10, mcSamples, 4))
	}
}

func TestForecast_MatchesMonteCarloWithAHeavyTail(t *testing.T) {
	p := distOf(heavyTail, mcSamples, 5)
	d := 90 * time.Millisecond
	f := engine.Forecast(engine.ForecastInput{Primary: p, Delay: d, MaxExtra: 1, Budget: 1, Burst: 10})
	checkAgainstMonteCarlo(t, f, monteCarlo(heavyTail, heavyTail, d, 1, 1, 10, mcSamples, 6))
}

// The second factor is the hedge target's survival, not the primary's: a
// target twice as fast as the primary (and another half as fast) changes
// the prediction, and the forecast follows the simulation for each.
func TestForecast_UsesTheHedgeTargetsDistribution(t *testing.T) {
	p := distOf(seedsTail, mcSamples, 7)
	fast := lognormal(25*time.Millisecond, 0.2, 0, 0, 0)
	slow := lognormal(100*time.Millisecond, 0.4, 0, 0, 0)
	d := 80 * time.Millisecond
	same := engine.Forecast(engine.ForecastInput{Primary: p, Delay: d, MaxExtra: 1, Budget: 1, Burst: 10})
	for _, tc := range []struct {
		name string
		lat  latencyModel
	}{{"fast target", fast}, {"slow target", slow}} {
		t.Run(tc.name, func(t *testing.T) {
			target := engine.HedgeTarget{Endpoint: tc.name, Weight: 1, Dist: distOf(tc.lat, mcSamples, 8)}
			f := engine.Forecast(engine.ForecastInput{Primary: p, Targets: []engine.HedgeTarget{target}, Delay: d, MaxExtra: 1, Budget: 1, Burst: 10})
			checkAgainstMonteCarlo(t, f, monteCarlo(seedsTail, tc.lat, d, 1, 1, 10, mcSamples, 9))
			if within(f.P99, same.P99, 0.05) {
				t.Errorf("p99 with the %s %s is the same-distribution forecast's %s", tc.name, f.P99, same.P99)
			}
		})
	}
	// Two targets weighted 3:1 are the mixture of the two.
	mix := func(r *rand.Rand) time.Duration {
		if r.Float64() < 0.75 {
			return fast(r)
		}
		return slow(r)
	}
	f := engine.Forecast(engine.ForecastInput{Primary: p, Delay: d, MaxExtra: 1, Budget: 1, Burst: 10, Targets: []engine.HedgeTarget{
		{Endpoint: "fast", Weight: 3, Dist: distOf(fast, mcSamples, 10)}, {Endpoint: "slow", Weight: 1, Dist: distOf(slow, mcSamples, 11)}}})
	checkAgainstMonteCarlo(t, f, monteCarlo(seedsTail, mix, d, 1, 1, 10, mcSamples, 12))
}

// With the delay at the p80 about a fifth of requests want a duplicate and
// the budget allows 5 %: the cap binds, a quarter of the wanted duplicates
// go, and the prediction (and the simulated bucket) say what that costs.
func TestForecast_BudgetCapBinding(t *testing.T) {
	p := distOf(seedsTail, mcSamples, 13)
	d, _ := p.Quantile(0.80)
	const budget, burst = 0.05, 10
	f := engine.Forecast(engine.ForecastInput{Primary: p, Delay: d, MaxExtra: 1, Budget: budget, Burst: burst})
	if !f.BudgetCapped || math.Abs(f.ExtraLoad-budget) > 1e-6 || math.Abs(f.FiringShare-budget/f.WantedFireRate) > 1e-6 {
		t.Fatalf("capped %v, extra load %.4f, share %.4f of wanted %.4f", f.BudgetCapped, f.ExtraLoad, f.FiringShare, f.WantedFireRate)
	}
	if want := burst / (f.WantedFireRate - budget); math.Abs(f.BurstRequests-want) > 1e-6 {
		t.Errorf("burst lasts %.1f requests, want %.1f", f.BurstRequests, want)
	}
	checkAgainstMonteCarlo(t, f, monteCarlo(seedsTail, seedsTail, d, 1, budget, burst, mcSamples, 14))
	free := engine.Forecast(engine.ForecastInput{Primary: p, Delay: d, MaxExtra: 1, Budget: 1, Burst: burst})
	if free.BudgetCapped || f.P99 <= free.P99 {
		t.Errorf("the cap should cost tail latency: capped p99 %s, uncapped %s", f.P99, free.P99)
	}
}

// Two duplicates, the second one delay after the first, with and without
// the cap.
func TestForecast_MatchesMonteCarloWithTwoDuplicates(t *testing.T) {
	p := distOf(seedsTail, mcSamples, 15)
	d := 60 * time.Millisecond
	for _, budget := range []float64{1, 0.15} {
		f := engine.Forecast(engine.ForecastInput{Primary: p, Delay: d, MaxExtra: 2, Budget: budget, Burst: 10})
		checkAgainstMonteCarlo(t, f, monteCarlo(seedsTail, seedsTail, d, 2, budget, 10, mcSamples, 16))
	}
}

// For an exponential S(t) = exp(−t/m), one hedge after d gives
// S_h(t) = exp(−(2t−d)/m) for t ≥ d, so the q-quantile is −m·ln(1−q)
// while that is below d, and (d − m·ln(1−q))/2 after.
func TestForecast_MatchesExponentialClosedForm(t *testing.T) {
	const mean = 50 * time.Millisecond
	exp := func(r *rand.Rand) time.Duration { return time.Duration(r.ExpFloat64() * float64(mean)) }
	p := distOf(exp, 400_000, 17)
	for _, at := range []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond} {
		want := math.Exp(-float64(at) / float64(mean))
		if got := p.SurvivalAt(at); math.Abs(got-want) > 0.01*want+0.002 {
			t.Errorf("S(%s) = %.5f, want %.5f", at, got, want)
		}
	}
	for _, d := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond} {
		f := engine.Forecast(engine.ForecastInput{Primary: p, Delay: d, MaxExtra: 1, Budget: 1, Burst: 10})
		for i, q := range []float64{0.50, 0.95, 0.99, 0.999} { // P50, P95, P99, P999
			plain := time.Duration(-math.Log(1-q) * float64(mean))
			want := plain
			if plain >= d {
				want = (d + plain) / 2
			}
			got := [4]time.Duration{f.P50, f.P95, f.P99, f.P999}[i]
			if !within(got, want, 0.02) {
				t.Errorf("d=%s q=%v: forecast %s, closed form %s", d, q, got, want)
			}
		}
	}
}

// Two points, 10 ms (90 %) and 100 ms (10 %), hedge at 30 ms: a slow
// primary is beaten by a fast hedge at 40 ms (9 %), and both are slow with
// probability 1 % (100 ms, the primary wins). So the hedged completion time
// is 10 ms (90 %), 40 ms (9 %), 100 ms (1 %), 10 % of requests fire.
func TestForecast_MatchesTwoPointDistribution(t *testing.T) {
	ms := time.Millisecond
	p := engine.Distribution{Exact: 100, Buckets: []engine.DistBucket{{Low: 10 * ms, High: 10 * ms, Exact: 90}, {Low: 100 * ms, High: 100 * ms, Exact: 10}},
		Survival: []engine.SurvivalStep{{At: 10 * ms, S: 0.1}, {At: 100 * ms, S: 0}}}
	f := engine.Forecast(engine.ForecastInput{Primary: p, Delay: 30 * ms, MaxExtra: 1, Budget: 1, Burst: 10})
	if f.P50 != 10*ms || f.P95 != 40*ms || f.P99 != 40*ms || f.P999 != 100*ms || f.Open != [4]bool{} {
		t.Errorf("p50 %s p95 %s p99 %s p99.9 %s open %v; want 10ms 40ms 40ms 100ms", f.P50, f.P95, f.P99, f.P999, f.Open)
	}
	if math.Abs(f.FireRate-0.1) > 1e-12 || math.Abs(f.ExtraLoad-0.1) > 1e-12 || f.BudgetCapped {
		t.Errorf("fire %v extra %v capped %v", f.FireRate, f.ExtraLoad, f.BudgetCapped)
	}
	if q, ok := p.Quantile(0.95); !ok || q != 100*ms {
		t.Errorf("unhedged p95 = %s %v, want 100ms", q, ok)
	}
	// Not hedged (max_extra 0): the primary's own.
	off := engine.Forecast(engine.ForecastInput{Primary: p, Delay: 30 * ms, Budget: 1, Burst: 10})
	if off.P99 != 100*ms || off.FireRate != 0 || off.ExtraLoad != 0 {
		t.Errorf("unhedged: p99 %s fire %v extra %v", off.P99, off.FireRate, off.ExtraLoad)
	}
}

func TestForecast_EmptyDistributionPredictsNothing(t *testing.T) {
	f := engine.Forecast(engine.ForecastInput{Delay: 50 * time.Millisecond, MaxExtra: 1, Budget: 0.1, Burst: 10})
	if f.Samples != 0 || f.P99 != 0 || f.FireRate != 0 || f.Delay != 50*time.Millisecond {
		t.Errorf("%+v", f)
	}
}
