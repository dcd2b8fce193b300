package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

// A pool with one endpoint to send a read to is not hedged at all (README,
// hedge_delay_ms): a hedge could only ask that same endpoint again, doubling
// the load on the one endpoint a client of it alone would have asked once,
// though hedge.same_domain (on by default) lets a spent pool be asked again.
func TestHedge_OneEndpointPoolIsNeverHedged(t *testing.T) {
	h := newHarness(t, hedgeOn("20ms"), sim.Config{Latency: fixed(300 * time.Millisecond)})
	r := h.call(1, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if r.hedged || r.attempts != 1 {
		t.Fatalf("hedged=%v attempts=%d; want one attempt, no hedge, with one endpoint in the pool", r.hedged, r.attempts)
	}
	if n := h.sims[0].MethodCount("eth_getBalance"); n != 1 {
		t.Fatalf("the only endpoint was asked %d times for one read 280 ms past the hedge delay; want once", n)
	}
	if m := h.status().Methods["eth_getBalance"]; m.HedgesFired != 0 {
		t.Fatalf("%d hedges fired; want none", m.HedgesFired)
	}
}
