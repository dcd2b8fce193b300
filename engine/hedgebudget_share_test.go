package engine_test

import (
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
	off := false
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("0s")(c)
		c.Hedge.Budget, c.Hedge.BudgetBurst = 0.10, 10
		c.Hedge.Methods = map[string]engine.HedgeMethodConfig{"eth_getLogs": {Enabled: &off}}
	}, sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(2 * time.Millisecond)})
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
