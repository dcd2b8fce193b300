package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

func TestRateLimit_BackedOffUntilRetryAfterAndNoClientError(t *testing.T) {
	h := newHarness(t, nil, sim.Config{RetryAfter: 2 * time.Second}, sim.Config{}, sim.Config{})
	h.sims[0].SetMode(sim.ModeRateLimit)
	mustOK(t, h.call(0, "eth_getBalance", addr, "latest")) // s0 first (cold rotation): 429, failover
	ep := h.endpoint("s0")
	if ep.BackoffUntil == nil || ep.Routable {
		t.Fatalf("status shows no back-off: %+v", ep)
	}
	// Every request below is sent before the back-off ends.
	for i := 1; i < 60 && time.Until(*ep.BackoffUntil) > 0; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if got := methodCount(h.sims[0], "eth_getBalance"); got != 1 {
		t.Fatalf("rate-limited endpoint got %d requests inside its Retry-After", got)
	}
	// After the back-off it is tried again.
	h.sims[0].SetMode(sim.ModeNormal)
	waitUntil(t, 5*time.Second, "back-off end", func() bool { return time.Now().After(*ep.BackoffUntil) })
	for i := 0; i < 30; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if methodCount(h.sims[0], "eth_getBalance") < 2 {
		t.Fatal("endpoint not used after its back-off")
	}
}
