package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

// With hedge.delay auto, a method with no answers yet waits hedge.cold_delay
// (250 ms by default) before a hedge, not hedge.min_delay (5 ms): until its
// distribution is known, an ordinary answer is no reason to ask twice.
func TestHedge_AColdMethodWaitsTheColdDelay(t *testing.T) {
	h := newHarness(t, hedgeOn("auto"),
		sim.Config{Latency: fixed(50 * time.Millisecond)},
		sim.Config{Latency: fixed(20 * time.Millisecond)})
	r := h.call(1, "eth_getBalance", addr, "latest") // cold: the first endpoint is primary
	mustOK(t, r)
	if r.hedged || r.attempts != 1 || r.endpoint != "s0" {
		t.Fatalf("hedged=%v attempts=%d endpoint=%s; want s0's 50 ms answer, unhedged under the 250 ms cold delay", r.hedged, r.attempts, r.endpoint)
	}
	if n := h.sims[1].MethodCount("eth_getBalance"); n != 0 {
		t.Fatalf("s1 was asked %d times; want no hedge", n)
	}
}
