package engine_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// probeRounds sends n rounds of head probes to every endpoint of h, as the
// probes package does, each round's probes at once.
func probeRounds(t *testing.T, h *harness, n int) {
	t.Helper()
	for range n {
		var wg sync.WaitGroup
		for _, ep := range h.status().Endpoints {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := h.eng.Probe(ctxT(t, 5*time.Second), ep.Name, "eth_blockNumber", nil)
				if err != nil || !res.OK {
					t.Errorf("probe %s: %v %s", ep.Name, err, res.Err)
				}
			}()
		}
		wg.Wait()
	}
}

// With hedging off, a client read given to a slower endpoint to explore it
// costs that client the difference. When its head probes put it as far
// behind the best as its figure does, the figure is not out of date and
// no read is given to it: before, s1 and s2 (100 and 120 ms beside a 5 ms
// s0) took 5 reads each in 2.5 s, as they took 17 of 40 reads at one
// a second over sims at 20, 60 and 100 ms.
func TestExplore_WithHedgingOffAnEndpointItsProbesPutAsFarBehindIsGivenNoRead(t *testing.T) {
	t.Parallel()
	// A try is void when this process stalled 20 ms or more while the
	// probes ran: s0's probes, 5 ms, then read several times that, and
	// they put s1 less far behind than its figure (in fresh-clone CI, read
	// 0 went to s1 to explore it).
	untilJudged(t, func(int) string {
		h := exploreSpreadHarness(t, func(c *engine.Config) { c.Hedge.Enabled = false })
		warmEvery(t, h)
		w := testutil.WatchStalls(t)
		probeRounds(t, h, 3)
		stall := w.Stop()
		rs := readsFor(t, h, 0, 5*exploreSpreadAfter)
		for i, r := range rs {
			if r.endpoint == "s0" {
				continue
			}
			if stall >= 20*time.Millisecond {
				return fmt.Sprintf("this process stalled %v while the probes ran, and read %d went to %s", stall, i, r.endpoint)
			}
			t.Fatalf("read %d of %d answered by %s, not the 5 ms s0, though its probes put it as far behind as its figure (%s; longest stall while they ran %v)", i, len(rs), r.endpoint, describe(h.trace(r.id)), stall)
		}
		t.Logf("%d reads over %s, all answered by s0", len(rs), 5*exploreSpreadAfter)
		return ""
	})
}

// What exploration is for stays: an endpoint whose window still holds a
// slow stretch that has passed, as its probes show, is given reads with
// hedging off until its figure is its own again.
func TestExplore_WithHedgingOffAnEndpointWhoseProbesSayItRecoveredIsGivenReads(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = false
		c.Router.ExploreAfter = exploreSpreadAfter
		c.Server.TraceRequests = 1000
	}, sim.Config{Latency: fixed(5 * time.Millisecond)}, sim.Config{Latency: fixed(5 * time.Millisecond)},
		sim.Config{Latency: fixed(5 * time.Millisecond)})
	warmEvery(t, h)
	// The slow stretch: s1 alone answers reads 100 ms late, twice as many
	// as its window held, so its figure holds it far behind the others.
	h.sims[1].SetExtraLatency(100 * time.Millisecond)
	slow := 2*int(h.endpoint("s1").Latency.Count) + 10
	alone(t, h, "s1", func() {
		for k := range slow {
			mustOK(t, h.call(8000+k, "eth_getBalance", addr, "latest"))
		}
	})
	h.sims[1].SetExtraLatency(0)
	probeRounds(t, h, 3)
	fig := h.endpoint("s1").Latency
	by := map[string]int{}
	for _, r := range readsFor(t, h, 0, 5*exploreSpreadAfter) {
		by[r.endpoint]++
	}
	if by["s1"] < 2 {
		t.Fatalf("reads answered %v: s1, quick again by its probes, explored %d times in %d turns of router.explore_after (its window: p50 %s over %d answers)", by, by["s1"], 5, fig.P50, fig.Count)
	}
	t.Logf("after %d slow answers and 3 quick probes (s1 p50 %s over %d answers): reads answered %v", slow, fig.P50, fig.Count, by)
}
