package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// With hedge.max_extra > 1 the extra hedges go out a delay apart, each to a
// failure domain no live attempt is in while one is left.
func TestHedge_ExtraHedgesGoADelayApartToOtherFailureDomains(t *testing.T) {
	slow := sim.Config{Latency: fixed(time.Second)}
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("60ms")(c)
		c.Hedge.MaxExtra = 3
		c.Hedge.BudgetBurst = 100
		// s1 shares s0's failure domain.
		c.Endpoints[1].Provider, c.Endpoints[1].Region = c.Endpoints[0].Provider, c.Endpoints[0].Region
	}, slow, slow, slow, sim.Config{Latency: fixed(10 * time.Millisecond)})
	// Cold, the endpoints are equals in config order: s0 is primary. The
	// first hedge skips s1 (s0's domain) for s2, the second goes to s3,
	// whose answer wins two delays in; s1 is never needed.
	r := h.call(1, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if r.endpoint != "s3" || r.attempts != 3 || !r.hedged {
		t.Fatalf("answered by %s after %d attempts; want s3 after two hedges", r.endpoint, r.attempts)
	}
	got := []int64{}
	for _, s := range h.sims {
		got = append(got, s.MethodCount("eth_getBalance"))
	}
	if got[0] != 1 || got[1] != 0 || got[2] != 1 || got[3] != 1 {
		t.Fatalf("requests per sim %v, want [1 0 1 1]", got)
	}
	if r.took < 120*time.Millisecond {
		t.Fatalf("answered in %s: the hedges were not a delay apart", r.took)
	}
	m := h.status().Methods["eth_getBalance"]
	if m.HedgesFired != 2 || m.HedgesWon != 1 {
		t.Fatalf("%d hedges fired, %d won; want 2 and 1", m.HedgesFired, m.HedgesWon)
	}
	t.Logf("answered by the second hedge after %s", r.took.Round(time.Millisecond))
}
