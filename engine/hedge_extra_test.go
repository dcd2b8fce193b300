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

// When hedge.max_extra is as large as the pool, a hedge with no endpoint
// left goes to one still working on the request: under an incident that
// slows the whole pool for a moment, a new attempt begun after it answers
// at once, where waiting would take the incident's whole tail.
func TestHedge_ExtraHedgeAsksAnEndpointAgainOnceThePoolIsSpent(t *testing.T) {
	fast := sim.Config{Latency: fixed(20 * time.Millisecond)}
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("200ms")(c)
		c.Hedge.MaxExtra = 2
		c.Hedge.BudgetBurst = 100
	}, fast, fast)
	// Slow the whole pool for 300 ms: the primary (at 0) and the first hedge
	// (at 200 ms) begin inside it, the second hedge (at 400 ms) after it.
	for _, s := range h.sims {
		s.SetExtraLatency(3 * time.Second)
	}
	time.AfterFunc(300*time.Millisecond, func() {
		for _, s := range h.sims {
			s.SetExtraLatency(0)
		}
	})
	r := h.call(1, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if r.attempts != 3 || !r.hedged || r.took > 2*time.Second {
		t.Fatalf("answered by %s after %d attempts and %s; want the second hedge, asked of an endpoint again, well before the incident's 3 s", r.endpoint, r.attempts, r.took)
	}
	got := []int64{h.sims[0].MethodCount("eth_getBalance"), h.sims[1].MethodCount("eth_getBalance")}
	if got[0]+got[1] != 3 || got[0] == 0 || got[1] == 0 {
		t.Fatalf("requests per sim %v: want one endpoint asked twice, the other once", got)
	}
	if m := h.status().Methods["eth_getBalance"]; m.HedgesFired != 2 || m.HedgesWon != 1 {
		t.Fatalf("%d hedges fired, %d won; want 2 and 1", m.HedgesFired, m.HedgesWon)
	}
	t.Logf("answered after %s by %s; requests per sim %v", r.took.Round(time.Millisecond), r.endpoint, got)
}
