package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint as quick as the others at the median and p90, 6 % of
// whose answers take twenty times as long, was their equal in the cost and
// took its turn at a third of the reads (and clients its tail). Its tail
// share now raises its cost, whether its slow answers arrive (hedging off)
// or hedges cut them short (the censored attempts count).
func TestRouter_AnEndpointWithATailTakesFewReads(t *testing.T) {
	quick := sim.Latency{Median: 2 * time.Millisecond, Sigma: 0.1}
	tailed := quick
	tailed.TailProb, tailed.TailMin, tailed.TailMax = 0.06, 50*time.Millisecond, 80*time.Millisecond
	for _, tc := range []struct {
		name  string
		hedge func(*engine.Config)
	}{
		{"hedging off", func(*engine.Config) {}},
		{"hedging at 10ms", func(c *engine.Config) { c.Hedge.Enabled, c.Hedge.Delay = true, "10ms" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) {
				c.Router.ExploreAfter = time.Hour // what is measured is the cost alone
				tc.hedge(c)
			}, sim.Config{Latency: quick}, sim.Config{Latency: quick}, sim.Config{Name: "tailed", Latency: tailed, Seed: 11})
			const learn = 450 // every endpoint measured well enough that a 6 % tail is surely one
			for i := range learn {
				mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
			}
			learnt := h.endpoint("tailed")
			if tails := h.sims[2].Counters().Tails; tails == 0 {
				t.Fatalf("the tailed endpoint took %d of the first %d reads and showed no tail: nothing to learn", learnt.Accounting.Primary, learn)
			}
			const n = 150
			for i := range n {
				mustOK(t, h.call(learn+i, "eth_getBalance", addr, "latest"))
			}
			after := h.endpoint("tailed")
			took := after.Accounting.Primary - learnt.Accounting.Primary
			t.Logf("tailed: %d of the first %d reads, %d of the next %d; tail share %.3f (factor %.2f); s0's %.3f",
				learnt.Accounting.Primary, learn, took, n, after.Score.TailShare, after.Score.TailFactor, h.endpoint("s0").Score.TailShare)
			if took > n/20 {
				t.Errorf("the tailed endpoint took %d of %d reads once its tail was known, want at most %d", took, n, n/20)
			}
			// The factor weighs the tail above the least of the others',
			// taken at the upper end of its interval (tail.go).
			if f := after.Score.TailFactor; f <= 1.25 || f > 1+100*after.Score.TailShare+1e-9 {
				t.Errorf("tailed: tail share %.4f factor %.3f, want a factor past router.tolerance and at most 1 + 100 × the share", after.Score.TailShare, f)
			}
			if s := h.endpoint("s0").Score.TailShare; s != 0 {
				t.Errorf("s0, no tail: tail share %.4f, want 0", s)
			}
		})
	}
}

// A quick endpoint with a wide spread (10 ms median, σ 0.8: p99 64 ms) is
// better at every quantile than a narrow slower one (40 ms, σ 0.25: p99
// 71 ms). Its tail measured against its own median alone made it lose
// every read to the slower one (a client's median 11 → 42 ms); measured
// against what the pool's best takes anyway, it keeps them.
func TestRouter_AQuickEndpointsSpreadIsNoTail(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Router.ExploreAfter = time.Hour },
		sim.Config{Name: "quick", Latency: sim.Latency{Median: 10 * time.Millisecond, Sigma: 0.8}, Seed: 3},
		sim.Config{Name: "steady", Latency: sim.Latency{Median: 40 * time.Millisecond, Sigma: 0.25}, Seed: 5})
	for i := range 200 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	before := h.endpoint("quick").Accounting.Primary
	const n = 100
	for i := range n {
		mustOK(t, h.call(1000+i, "eth_getBalance", addr, "latest"))
	}
	q := h.endpoint("quick")
	took := q.Accounting.Primary - before
	t.Logf("quick took %d of %d reads; tail share %.3f (factor %.2f), cost %v against steady's %v",
		took, n, q.Score.TailShare, q.Score.TailFactor, q.Score.Cost, h.endpoint("steady").Score.Cost)
	if took < n*9/10 {
		t.Errorf("quick took %d of %d reads, want at least %d: it is the better endpoint at every quantile", took, n, n*9/10)
	}
}
