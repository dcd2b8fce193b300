package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

func TestRouter_SlowEndpointAvoidedButExploredNowAndThen(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Router.ExploreAfter = 300 * time.Millisecond },
		sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(60 * time.Millisecond)})
	for i := 0; i < 20; i++ { // learn both
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	before := h.sims[1].MethodCount("eth_getBalance")
	start := time.Now()
	n := 0
	for time.Since(start) < 1500*time.Millisecond {
		mustOK(t, h.call(n, "eth_getBalance", addr, "latest"))
		n++
	}
	elapsed := time.Since(start)
	got := h.sims[1].MethodCount("eth_getBalance") - before
	most := int64(elapsed/(300*time.Millisecond)) + 1
	if got < 1 || got > most {
		t.Fatalf("slow endpoint served %d of %d reads in %s; want between 1 and %d explorations", got, n, elapsed, most)
	}
	t.Logf("slow endpoint explored %d times in %d reads over %s", got, n, elapsed)
}
