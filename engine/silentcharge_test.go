package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint charged a hang at its deadline, silent for the whole of it,
// is ranked after the endpoints that answer until it answers again: the
// read that met the hang waited its deadline, the next ones do not. Only
// suspect, a lone hang kept its place by cost while its breaker counted up
// to breaker.failures, and each read sent to it first waited its deadline
// (hedging off: nothing else races it sooner).
func TestHang_ChargedSilentEndpointIsRankedAfterTheAnswering(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = false
		c.Breaker.Failures = 20 // no breaker opens within the test: the rank alone keeps reads off s0
		c.Breaker.Cooldown = time.Minute
		c.Router.ExploreAfter = time.Hour
	}, sim.Config{Latency: fixed(5 * time.Millisecond)}, sim.Config{Latency: fixed(30 * time.Millisecond)},
		sim.Config{Latency: fixed(30 * time.Millisecond)})
	// Warm-up: every endpoint learnt (turns are taken while cold), then
	// reads go to s0, the fastest.
	for i := range 40 {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if i >= 37 && r.endpoint != "s0" {
			t.Fatalf("warm-up read %d answered by %q, want s0 (the fastest)", i, r.endpoint)
		}
	}
	h.sims[0].SetMode(sim.ModeHang)
	var waited []int
	for i := range 8 {
		r := h.call(100+i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.attempts > 1 {
			waited = append(waited, i)
		}
	}
	if len(waited) != 1 || waited[0] != 0 {
		ep := h.endpoint("s0")
		t.Fatalf("reads after the hang that went first to s0 and waited its deadline: %v, want only the first (s0: breaker %s, %d failures in a row)",
			waited, ep.Breaker.State, ep.Breaker.ConsecutiveFailures)
	}
}
