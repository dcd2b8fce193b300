package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// hedge.budget is the share of requests hedges may add (ARCHITECTURE.md:
// "hedges may add at most this share of requests"): 300 reads of
// eth_getLogs (weight 6, not hedged) then 300 of eth_blockNumber (weight
// 1) each wanting a hedge at once send at most 0.10 × 600 + the burst of
// 10 (70 in a run). In cost units alone the heavy reads' deposits paid
// for light hedges: 219 (36 % of the requests).
func TestHedge_BudgetIsAShareOfRequestsWhateverTheMethodsWeigh(t *testing.T) {
	t.Parallel()
	h := budgetHarness(t, "eth_getLogs")
	parallel(300, 4, func(i int) { mustOK(t, h.call(i, "eth_getLogs", map[string]any{"fromBlock": "0x1", "toBlock": "0x1"})) })
	parallel(300, 4, func(i int) { mustOK(t, h.call(1000+i, "eth_blockNumber")) })
	fired := h.status().Totals.HedgesFired
	t.Logf("600 requests, %d hedges", fired)
	if fired > 70 {
		t.Fatalf("%d hedges for 600 requests at a budget of 0.10 and a burst of 10, want at most 70", fired)
	}
	if fired < 30 {
		t.Fatalf("%d hedges: the light reads' own deposits pay for about 30", fired)
	}
}

// Each call of a client batch is a request in the budget: 100 batches of
// 20 reads (not hedged), then 300 single reads each wanting a hedge at
// once, 2300 requests at 0.10 and a burst of 10, allow 240 hedges. Counted
// one per upstream chunk, the batches deposited 10 request tokens for
// 2000 requests and the singles got 49 hedges (review of stop 57).
func TestHedge_EachCallOfABatchIsARequestInTheBudget(t *testing.T) {
	t.Parallel()
	h := budgetHarness(t, "eth_getBalance")
	parallel(100, 4, func(i int) {
		var calls []string
		for j := range 20 {
			calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}`, j))
		}
		r := h.post("[" + strings.Join(calls, ",") + "]")
		if r.status != 200 {
			t.Fatalf("batch: %d %s", r.status, r.body)
		}
	})
	st := h.status()
	saved := st.Hedge.BudgetRequestTokens
	t.Logf("after batches: requests %d, request tokens %.1f (cap %.1f), cost tokens %.1f (cap %.1f)",
		st.Totals.Requests, saved, st.Hedge.BudgetRequestCap, st.Hedge.BudgetTokens, st.Hedge.BudgetCap)
	parallel(300, 4, func(i int) { mustOK(t, h.call(5000+i, "eth_blockNumber")) })
	st = h.status()
	t.Logf("total requests %d, hedges fired %d (%.1f %%)", st.Totals.Requests, st.Totals.HedgesFired, 100*float64(st.Totals.HedgesFired)/float64(st.Totals.Requests))
	if st.Totals.HedgesFired < 200 || st.Totals.HedgesFired > 240 {
		t.Errorf("%d hedges for %d requests at 0.10 + burst 10, want about 240: the batches' 2000 calls deposited %.1f request tokens", st.Totals.HedgesFired, st.Totals.Requests, saved)
	}
}

// A batch's hedge is a hedge of each of its calls: heavy unhedged singles,
// then batches of 20 light reads hedged at once, 900 requests, send at
// most 100 (0.10 × 900 + 10). Withdrawing one request token per batch,
// they sent 240, the heavy reads' cost units paying (review of stop 57).
func TestHedge_ABatchsHedgeIsAHedgeOfEachOfItsCalls(t *testing.T) {
	t.Parallel()
	h := budgetHarness(t, "eth_getLogs")
	parallel(300, 4, func(i int) { mustOK(t, h.call(i, "eth_getLogs", map[string]any{"fromBlock": "0x1", "toBlock": "0x1"})) })
	parallel(30, 2, func(i int) {
		var calls []string
		for j := range 20 {
			calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber","params":[]}`, j))
		}
		r := h.post("[" + strings.Join(calls, ",") + "]")
		if r.status != 200 {
			t.Fatalf("batch: %d %s", r.status, r.body)
		}
	})
	st := h.status()
	t.Logf("total requests %d, hedges fired %d (%.1f %%); request tokens %.1f, cost tokens %.1f",
		st.Totals.Requests, st.Totals.HedgesFired, 100*float64(st.Totals.HedgesFired)/float64(st.Totals.Requests), st.Hedge.BudgetRequestTokens, st.Hedge.BudgetTokens)
	if max := 0.10*float64(st.Totals.Requests) + 10; float64(st.Totals.HedgesFired) > max {
		t.Errorf("%d hedges for %d requests at 0.10 + burst 10 (at most %.0f)", st.Totals.HedgesFired, st.Totals.Requests, max)
	}
}

// budgetHarness is two 2 ms sims behind an engine that hedges every read
// at once (but those of unhedged), at a budget of 0.10 and a burst of 10.
func budgetHarness(t *testing.T, unhedged string) *harness {
	off := false
	return newHarness(t, func(c *engine.Config) {
		hedgeOn("0s")(c)
		c.Hedge.Budget, c.Hedge.BudgetBurst = 0.10, 10
		c.Hedge.Methods = map[string]engine.HedgeMethodConfig{unhedged: {Enabled: &off}}
	}, sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(2 * time.Millisecond)})
}
