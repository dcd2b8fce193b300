package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// backOffS1 makes s1 answer one eth_getBalance 429 (no Retry-After: a
// back-off of breaker.backoff_base) and then answer normally again.
func backOffS1(t *testing.T, h *harness) time.Time {
	t.Helper()
	h.sims[1].SetMode(sim.ModeRateLimit)
	for i := 0; h.sims[1].MethodCount("eth_getBalance") == 0; i++ {
		if i == 10 {
			t.Fatal("s1 not asked in 10 reads")
		}
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	h.sims[1].SetMode(sim.ModeNormal)
	until := h.endpoint("s1").Methods["eth_getBalance"].BackoffUntil
	if until.IsZero() {
		t.Fatal("s1 is not backing off eth_getBalance after its 429")
	}
	return until
}

// s1 answered one 429 a moment ago (its own back-off of 1 s, no
// Retry-After) and is healthy since; s0 answers a 500. A client of s1, or
// one asking s0 again, has its answer: the read asks s0 again at once,
// then s1 once its back-off is over, within the request's deadline,
// rather than relaying s0's 500 at once.
func TestFailover_ReadWaitsForAShortBackOffRatherThanRelayA500(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		takeTurns(c)
		c.Breaker.Failures = 100
		c.Breaker.BackoffBase = time.Second
	}, sim.Config{}, sim.Config{})
	until := backOffS1(t, h)
	h.sims[0].SetMode(sim.ModeError)
	before0, before1 := h.sims[0].MethodCount("eth_getBalance"), h.sims[1].MethodCount("eth_getBalance")
	r := h.call(100, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if r.endpoint != "s1" {
		t.Fatalf("answered by %q, want s1 after its back-off", r.endpoint)
	}
	if time.Now().Before(until) {
		t.Fatalf("s1 asked before its back-off ended (%s)", until)
	}
	if n := h.sims[0].MethodCount("eth_getBalance") - before0; n != 2 {
		t.Fatalf("s0 asked %d times, want 2 (its 500, then once again at once)", n)
	}
	if n := h.sims[1].MethodCount("eth_getBalance") - before1; n != 1 {
		t.Fatalf("s1 asked %d times, want 1 (after its back-off)", n)
	}
}
