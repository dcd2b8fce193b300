package engine_test

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// canaryHarness: alpha a primary, beta a canary with the given share;
// draws nil is the engine's own random source.
func canaryHarness(t *testing.T, sh float64, draws func() float64) *harness {
	t.Helper()
	return startHarnessOpts(t, nil, engine.Options{Rand: draws}, func(c *engine.Config) {
		c.Endpoints[1].Role = engine.RoleCanary
		c.Endpoints[1].Share = share(sh)
	}, sim.Config{Name: "alpha"}, sim.Config{Name: "beta"})
}

// Over n reads the canary takes its share of first attempts, within four
// standard deviations of the binomial; with no hedging and no failure each
// read is one attempt, so the sims' counts are the first attempts.
func TestCanary_TakesItsShareOfFirstAttempts(t *testing.T) {
	const n, p = 600, 0.2
	h := canaryHarness(t, p, nil)
	for i := 0; i < n; i++ {
		r := h.call(i, "eth_getBalance", addr, "0x10")
		mustOK(t, r)
		if r.attempts != 1 {
			t.Fatalf("read %d took %d attempts", i, r.attempts)
		}
	}
	got := float64(h.sims[1].MethodCount("eth_getBalance"))
	sd := math.Sqrt(n * p * (1 - p))
	t.Logf("canary share %.2f: %d of %d first attempts (want %.0f ± %.0f, 4 sd)", p, int(got), n, n*p, 4*sd)
	if math.Abs(got-n*p) > 4*sd {
		t.Fatalf("canary took %d of %d first attempts, want %.0f ± %.0f", int(got), n, n*p, 4*sd)
	}
	st := h.status()
	if st.Endpoints[1].Role != engine.RoleCanary || st.Endpoints[1].Share != p || st.StandbyActive {
		t.Fatalf("status role %q share %v standby_active %v", st.Endpoints[1].Role, st.Endpoints[1].Share, st.StandbyActive)
	}
}

// The draw is the engine's Options.Rand: a draw under share sends the
// first attempt to the canary, one at or above it to the primaries.
func TestCanary_DrawDecidesTheFirstAttempt(t *testing.T) {
	draws := []float64{0.05, 0.5, 0.09, 0.1, 0.99}
	want := []string{"beta", "alpha", "beta", "alpha", "alpha"}
	var i atomic.Int64
	h := canaryHarness(t, 0.1, func() float64 { return draws[int(i.Add(1)-1)%len(draws)] })
	for k, w := range want {
		r := h.call(k, "eth_getBalance", addr, "0x10")
		mustOK(t, r)
		if r.endpoint != w {
			t.Fatalf("draw %.2f: answered by %q, want %s", draws[k], r.endpoint, w)
		}
	}
}

// A failing canary costs clients nothing: its reads fail over to the
// primary (0 client errors), its breaker opens, and writes never go to it.
func TestCanary_FailuresFailOverWithNoClientError(t *testing.T) {
	h := canaryHarness(t, 1, nil)
	h.sims[1].SetMode(sim.ModeError)
	for i := 0; i < 50; i++ {
		r := h.call(i, "eth_getBalance", addr, "0x10")
		mustOK(t, r)
		if r.endpoint != "alpha" {
			t.Fatalf("read %d answered by %q", i, r.endpoint)
		}
	}
	st := h.status()
	if st.Totals.ClientErrors != 0 || st.Endpoints[1].Breaker.State == engine.BreakerClosed {
		t.Fatalf("client errors %d, canary breaker %s", st.Totals.ClientErrors, st.Endpoints[1].Breaker.State)
	}
	t.Logf("50 reads: 0 client errors; the canary's sim got %d, its breaker %s", h.sims[1].MethodCount("eth_getBalance"), st.Endpoints[1].Breaker.State)
	h.sims[1].SetMode(sim.ModeNormal)
	w := h.call(100, "eth_sendRawTransaction", "0x01")
	mustOK(t, w)
	if w.endpoint != "alpha" || h.sims[1].MethodCount("eth_sendRawTransaction") != 0 {
		t.Fatalf("write answered by %q; canary got %d", w.endpoint, h.sims[1].MethodCount("eth_sendRawTransaction"))
	}
}

// A canary is not a hedge target while the primaries are ready: with
// hedging on and a slow primary, hedges go to the other primary.
func TestCanary_IsNotAHedgeTarget(t *testing.T) {
	t.Parallel()
	never := func() float64 { return 0.99 } // the canary's share is never drawn
	h := startHarnessOpts(t, nil, engine.Options{Rand: never}, func(c *engine.Config) {
		c.Endpoints[2].Role = engine.RoleCanary
		c.Endpoints[2].Share = share(0.5)
		c.Hedge.Enabled = true
		c.Hedge.Delay = "5ms"
		c.Hedge.Budget = 1
		c.Hedge.BudgetBurst = 100
	}, sim.Config{Name: "alpha", Latency: fixed(40e6)}, sim.Config{Name: "bravo", Latency: fixed(40e6)}, sim.Config{Name: "beta"})
	hedged := 0
	for i := 0; i < 20; i++ {
		r := h.call(i, "eth_getBalance", addr, "0x10")
		mustOK(t, r)
		if r.hedged {
			hedged++
		}
	}
	if hedged == 0 {
		t.Fatal("no read was hedged: the test shows nothing")
	}
	if got := h.sims[2].MethodCount("eth_getBalance"); got != 0 {
		t.Fatalf("the canary got %d reads (%d hedged), want 0", got, hedged)
	}
}

// The canary's draw does not displace an explored endpoint: with a canary
// taking every read's first attempt (share 1), the slower primary beta is
// still given the reads router.explore_after hands it, so its latency
// stays known.
func TestCanary_DrawLeavesExploredReadsAlone(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[2].Role = engine.RoleCanary
		c.Endpoints[2].Share = share(1)
		c.Router.ExploreAfter = 10 * time.Millisecond
	}, sim.Config{Name: "alpha", Latency: fixed(time.Millisecond)}, sim.Config{Name: "beta", Latency: fixed(5 * time.Millisecond)},
		sim.Config{Name: "canary"})
	const n = 60
	for i := 0; i < n; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "0x10"))
		time.Sleep(2 * time.Millisecond) // beta comes due for exploration every few reads
	}
	alpha, beta, canary := h.sims[0].MethodCount("eth_getBalance"), h.sims[1].MethodCount("eth_getBalance"), h.sims[2].MethodCount("eth_getBalance")
	t.Logf("%d reads: alpha %d, beta %d, canary %d", n, alpha, beta, canary)
	if beta == 0 || canary == 0 || alpha+beta+canary != n {
		t.Fatalf("alpha %d, beta %d, canary %d of %d reads: want beta explored and the canary the rest", alpha, beta, canary, n)
	}
}
