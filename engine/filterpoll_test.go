package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A filter lives only on the endpoint that created it. When that
// endpoint's breaker opens on a burst of errors and the endpoint heals, the
// filter is still there: a poll reaches it (no verdict for the breaker)
// rather than being refused until the breaker closes. Refused, viem drops
// the filter and creates another, losing the logs the first one held, and
// ethers logs each failed poll; a client polling the endpoint directly
// gets its changes.
func TestFilters_PollReachesItsEndpointWhileItsBreakerIsOpen(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Breaker.Cooldown = time.Minute }, sim.Config{}, sim.Config{})
	h.adminDo("POST", "/v1/endpoints/s1/drain", "")
	r := h.call(1, "eth_newFilter", map[string]any{"fromBlock": "latest"})
	mustOK(t, r)
	if r.endpoint != "s0" {
		t.Fatalf("filter created on %s, want s0", r.endpoint)
	}
	var id string
	json.Unmarshal([]byte(resultString(t, r)), &id)
	h.adminDo("POST", "/v1/endpoints/s1/undrain", "")

	readUntilOpen(t, h, "s0", h.sims[0])
	h.sims[0].SetMode(sim.ModeNormal)

	before := h.sims[0].Counters().ByMethod["eth_getFilterChanges"]
	for i := 0; i < 3; i++ {
		r := h.call(i, "eth_getFilterChanges", id)
		if r.status != 200 || r.rpcError() != nil {
			t.Fatalf("poll %d of a filter s0 still holds: HTTP %d %s", i, r.status, r.body)
		}
		if r.endpoint != "s0" {
			t.Fatalf("poll answered by %q, want s0", r.endpoint)
		}
	}
	if n := h.sims[0].Counters().ByMethod["eth_getFilterChanges"] - before; n != 3 {
		t.Fatalf("s0 saw %d polls, want 3", n)
	}
	if b := h.endpoint("s0").Breaker; b.State != engine.BreakerOpen {
		t.Fatalf("s0's breaker %s: a poll past an open breaker gives it no verdict", b.State)
	}
}
