package bench_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/sim"
)

// expSamples is an exponential distribution with the given mean, sampled at
// evenly spaced probabilities so that its empirical quantiles are exact to
// within one step.
func expSamples(n int, mean time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		p := (float64(i) + 0.5) / float64(n)
		out[i] = time.Duration(-math.Log(1-p) * float64(mean))
	}
	return out
}

func near(got, want time.Duration, rel float64) bool {
	return math.Abs(float64(got-want)) <= rel*float64(want)+float64(time.Microsecond)
}

// For an exponential S(t) = exp(−t/m), one hedge after d gives
// S_h(t) = exp(−(2t−d)/m) for t ≥ d, so the q-quantile is
// −m·ln(1−q) while that is below d, and (d − m·ln(1−q))/2 after.
func TestModel_MatchesExponentialClosedForm(t *testing.T) {
	const mean = 50 * time.Millisecond
	dist, err := bench.DistFromSamples(expSamples(200_000, mean))
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond} {
		want := math.Exp(-float64(at) / float64(mean))
		if got := dist.Survival(at); math.Abs(got-want) > 1e-4 {
			t.Errorf("S(%s) = %.5f, want %.5f", at, got, want)
		}
	}
	for _, d := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond} {
		for _, q := range []float64{0.5, 0.95, 0.99, 0.999} {
			plain := time.Duration(-math.Log(1-q) * float64(mean))
			want := plain
			if plain >= d {
				want = (d + plain) / 2
			}
			if got := dist.HedgedQuantile(q, d); !near(got, want, 0.005) {
				t.Errorf("d=%s q=%v: model %s, closed form %s", d, q, got, want)
			}
		}
	}
}

// Two points, 10 ms (90 %) and 100 ms (10 %), hedge at 30 ms: a slow
// primary is beaten by a fast hedge at 40 ms (9 %), and both are slow with
// probability 1 % (100 ms, the primary wins). So the hedged completion time
// is 10 ms (90 %), 40 ms (9 %), 100 ms (1 %).
func TestModel_MatchesTwoPointDistribution(t *testing.T) {
	var s []time.Duration
	for i := range 100 {
		s = append(s, map[bool]time.Duration{true: 100 * time.Millisecond, false: 10 * time.Millisecond}[i < 10])
	}
	dist, err := bench.DistFromSamples(s)
	if err != nil {
		t.Fatal(err)
	}
	const d = 30 * time.Millisecond
	ms := time.Millisecond
	for _, tc := range []struct {
		at   time.Duration
		want float64
	}{{5 * ms, 1}, {10 * ms, 0.1}, {39 * ms, 0.1}, {40 * ms, 0.01}, {99 * ms, 0.01}, {100 * ms, 0}} {
		if got := dist.HedgedSurvival(tc.at, d); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("S_h(%s) = %v, want %v", tc.at, got, tc.want)
		}
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 10 * ms}, {0.9, 10 * ms}, {0.95, 40 * ms}, {0.99, 40 * ms}, {0.999, 100 * ms}} {
		if got := dist.HedgedQuantile(tc.q, d); got != tc.want {
			t.Errorf("hedged q%v = %s, want %s", tc.q, got, tc.want)
		}
	}
	if got := dist.Quantile(0.95); got != 100*ms {
		t.Errorf("unhedged p95 = %s, want 100ms", got)
	}
	if got := bench.ForecastP99(dist, d); got != 40 {
		t.Errorf("the model column's p99 = %v ms, want 40", got)
	}
}

// The model against a simulation of the mechanism itself: primary X, and
// when X > d a duplicate Y sent at d, completion min(X, d+Y), with X and Y
// drawn independently from issue 3's latency model, fixed seed.
func TestModel_MatchesMonteCarloOfHedging(t *testing.T) {
	lat := sim.TailScenario().Latency
	r := rand.New(rand.NewPCG(42, 7))
	const n = 200_000
	measured := make([]time.Duration, n)
	for i := range measured {
		measured[i] = lat.Sample(r)
	}
	dist, err := bench.DistFromSamples(measured)
	if err != nil {
		t.Fatal(err)
	}
	d := dist.Quantile(0.95)
	hedged := make([]time.Duration, n)
	for i := range hedged {
		x := lat.Sample(r)
		if x > d {
			x = min(x, d+lat.Sample(r))
		}
		hedged[i] = x
	}
	slices.Sort(hedged)
	mc := func(q float64) time.Duration { return hedged[int(math.Ceil(q*n))-1] }
	for _, tc := range []struct {
		q   float64
		tol float64
	}{{0.5, 0.02}, {0.95, 0.02}, {0.99, 0.03}, {0.999, 0.05}} {
		got, want := dist.HedgedQuantile(tc.q, d), mc(tc.q)
		if !near(got, want, tc.tol) {
			t.Errorf("q%v at d=%s: model %s, Monte Carlo %s", tc.q, d, got, want)
		}
	}
	if un, h := dist.Quantile(0.99), dist.HedgedQuantile(0.99, d); h*3 > un {
		t.Errorf("model p99 %s is not far below the unhedged %s", h, un)
	}
}

func TestModel_EmptySamplesRefused(t *testing.T) {
	if _, err := bench.DistFromSamples(nil); err == nil {
		t.Error("empty sample accepted")
	}
}
