package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// hedgesUnderBudget sends n reads of method one after another, every
// primary slower than the hedge delay, under a budget that only its burst
// pays for, and returns the hedges fired and the method's weight in the
// status.
func hedgesUnderBudget(t *testing.T, method string, params []any, weights map[string]float64) (fired int64, weight float64) {
	t.Helper()
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("2ms")(c)
		c.Hedge.Budget = 0.01
		c.Hedge.BudgetBurst = 12
		c.Methods.Weights = weights
		// Probes off the budget's way: the test's reads are the only ones.
		c.Probes.Interval = time.Hour
	}, sim.Config{Latency: fixed(40 * time.Millisecond)}, sim.Config{Latency: fixed(40 * time.Millisecond)})
	const n = 20
	for i := range n {
		mustOK(t, h.call(i, method, params...))
	}
	m := h.status().Methods[method]
	return m.HedgesFired, m.Weight
}

// Providers meter heavy reads by their compute units: under the same budget
// (its burst of 12 units), eth_getLogs (60 CU, weight 6) buys a sixth of the
// hedges eth_blockNumber (10 CU, weight 1) buys; with methods.weights
// setting eth_getLogs to 1, it buys as many.
func TestBudget_HeavyMethodHedgesDrawTheBudgetFasterAndTheConfigWeightWins(t *testing.T) {
	t.Parallel()
	logs := []any{map[string]any{"fromBlock": "0x1", "toBlock": "0x2"}}
	light, lw := hedgesUnderBudget(t, "eth_blockNumber", nil, nil)
	heavy, hw := hedgesUnderBudget(t, "eth_getLogs", logs, nil)
	overridden, ow := hedgesUnderBudget(t, "eth_getLogs", logs, map[string]float64{"eth_getlogs": 1})
	t.Logf("20 slow reads each, budget 0.01, burst 12 units: eth_blockNumber (weight %g) %d hedges, eth_getLogs (weight %g) %d, eth_getLogs with methods.weights = 1 (weight %g) %d",
		lw, light, hw, heavy, ow, overridden)
	if lw != 1 || hw != 6 || ow != 1 {
		t.Fatalf("weights in the status: eth_blockNumber %g, eth_getLogs %g, overridden %g; want 1, 6, 1", lw, hw, ow)
	}
	// Burst 12 plus 20 deposits of 0.01 × weight: 12 light hedges, 2 heavy.
	if light < 10 || light > 12 || heavy != 2 || overridden < 10 || overridden > 12 {
		t.Fatalf("hedges fired: eth_blockNumber %d, eth_getLogs %d, eth_getLogs at weight 1 %d; want about 12, 2 and 12", light, heavy, overridden)
	}
}
