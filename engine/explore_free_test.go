package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// exploreSpreadHarness is three healthy endpoints far apart (5, 100 and
// 120 ms) with a short router.explore_after, hedging on with its delay far
// above every answer (a hedge at 0 ms is exploration's), then mut.
func exploreSpreadHarness(t *testing.T, mut func(*engine.Config)) *harness {
	return newHarness(t, func(c *engine.Config) {
		hedgeOn("2s")(c)
		c.Hedge.BudgetBurst = 50
		c.Router.ExploreAfter = exploreSpreadAfter
		c.Server.TraceRequests = 1000
		if mut != nil {
			mut(c)
		}
	}, sim.Config{Latency: fixed(5 * time.Millisecond)}, sim.Config{Latency: fixed(100 * time.Millisecond)},
		sim.Config{Latency: fixed(120 * time.Millisecond)})
}

const exploreSpreadAfter = 500 * time.Millisecond

// warmEvery has every endpoint answer enough reads for its latency
// figure to be routed by (warmEveryEndpointTo, whose ids are its own).
func warmEvery(t *testing.T, h *harness) {
	t.Helper()
	warmEveryEndpointTo(t, h, 5, "eth_getBalance", addr, "latest")
}

// readsFor sends reads one at a time for d, from id on, and returns them.
func readsFor(t *testing.T, h *harness, id int, d time.Duration) []reply {
	t.Helper()
	var rs []reply
	for end := time.Now().Add(d); time.Now().Before(end); id++ {
		r := h.call(id, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		rs = append(rs, r)
	}
	return rs
}

// successes is how many answers each endpoint gave over the stats window.
func successes(h *harness) map[string]int64 {
	n := map[string]int64{}
	for _, ep := range h.status().Endpoints {
		n[ep.Name] = ep.Rates.Successes
	}
	return n
}

// Exploration keeps a slower endpoint measured without a client waiting
// on it: with hedging on, the read that explores it keeps the best
// endpoint as its primary and sends it a hedge at once, which runs on to
// its answer. Given the read as its primary, a healthy endpoint 95 ms
// slower cost that client 95 ms (a page of 20 parallel reads over sims
// at 20, 60 and 100 ms took 50 ms once in a hundred, against 30 ms
// straight to the 20 ms sim).
func TestExplore_AHealthySlowerEndpointIsExploredBesideTheBestNotInstead(t *testing.T) {
	t.Parallel()
	h := exploreSpreadHarness(t, nil)
	warmEvery(t, h)
	before := successes(h)
	start := time.Now()
	rs := readsFor(t, h, 0, 5*exploreSpreadAfter)
	var slowest time.Duration
	for i, r := range rs {
		if r.endpoint != "s0" {
			t.Fatalf("read %d of %d answered by %s, not the 5 ms s0: a read explored a slower endpoint in the client's place (%s)", i, len(rs), r.endpoint, describe(h.trace(r.id)))
		}
		slowest = max(slowest, r.took)
	}
	span := time.Since(start)
	// The last exploring hedges may still be running on to their answers.
	var after map[string]int64
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		after = successes(h)
		if after["s1"]-before["s1"] >= 2 && after["s2"]-before["s2"] >= 2 || time.Now().After(deadline) {
			break
		}
	}
	for _, name := range []string{"s1", "s2"} {
		if got := after[name] - before[name]; got < 2 {
			t.Errorf("%s answered %d exploring hedges over %s of reads (router.explore_after %s), want at least 2: exploration must still measure it", name, got, span.Round(time.Millisecond), exploreSpreadAfter)
		}
	}
	if st := h.status().Methods["eth_getBalance"]; st.HedgesFired == 0 {
		t.Error("no hedge counted: an exploring hedge is a hedge (role, budget, X-Rpcdash-Hedged)")
	}
	t.Logf("%d reads over %s, all answered by s0 (slowest %s); exploring answers s1 +%d, s2 +%d", len(rs), span.Round(time.Millisecond), slowest.Round(time.Millisecond), after["s1"]-before["s1"], after["s2"]-before["s2"])
}

// With hedging off no duplicate may go out: a healthy endpoint due for
// exploration is given the read when nothing says its figure is current
// (no probes here: explore_probes_test.go has them), so that a bad
// stretch in its window cannot starve it for the window's whole span.
func TestExplore_WithHedgingOffAHealthyEndpointIsGivenTheRead(t *testing.T) {
	t.Parallel()
	h := exploreSpreadHarness(t, func(c *engine.Config) { c.Hedge.Enabled = false })
	by := map[string]int{}
	hedged := 0
	warmEvery(t, h)
	for _, r := range readsFor(t, h, 0, 5*exploreSpreadAfter) {
		by[r.endpoint]++
		if r.hedged {
			hedged++
		}
	}
	if by["s1"] == 0 || by["s2"] == 0 {
		t.Errorf("reads answered %v: with hedging off, s1 and s2 were never explored", by)
	}
	if hedged != 0 {
		t.Errorf("%d reads hedged with hedging off", hedged)
	}
	t.Logf("reads answered %v", by)
}

// A budget that cannot fund every exploring hedge makes exploration wait,
// not hand the read over: at one read a second the budget funds a hedge
// every ten or so, and given the reads it could not fund, the slower two
// of three sims (20, 60, 100 ms) took 5 of 34 measured reads.
func TestExplore_AnEndpointDueWaitsForTheBudgetRatherThanTakingTheRead(t *testing.T) {
	t.Parallel()
	h := exploreSpreadHarness(t, func(c *engine.Config) {
		c.Hedge.Budget = 0.01 // about one exploring hedge in the run
		c.Hedge.BudgetBurst = 1
	})
	warmEvery(t, h)
	rs := readsFor(t, h, 0, 5*exploreSpreadAfter)
	for i, r := range rs {
		if r.endpoint != "s0" {
			t.Fatalf("read %d of %d answered by %s, not the 5 ms s0: the budget could not fund an exploring hedge, and the read was given to a slower endpoint instead (%s)", i, len(rs), r.endpoint, describe(h.trace(r.id)))
		}
	}
	st := h.status().Hedge
	t.Logf("%d reads, all answered by s0; budget %.2f of %.2f units left", len(rs), st.BudgetTokens, st.BudgetCap)
}
