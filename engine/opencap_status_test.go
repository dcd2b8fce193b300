package engine_test

import (
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// An endpoint that failed enough to open but that breaker.max_open_share
// keeps closed says so in the status (breaker.held_closed): the console
// showed it "● closed" beside its errors, with nothing saying why a
// failing endpoint was still in the pool.
func TestBreaker_HeldClosedByTheCapShowsInTheStatus(t *testing.T) {
	h, clock, probe := failingPair(t)
	for _, name := range []string{"s0", "s1"} {
		for range 3 {
			probe(name)
		}
	}
	s0, s1 := h.endpoint("s0").Breaker, h.endpoint("s1").Breaker
	if s0.State != engine.BreakerOpen || s0.HeldClosed {
		t.Fatalf("s0: breaker %s, held_closed %v; want open, not held", s0.State, s0.HeldClosed)
	}
	if s1.State != engine.BreakerClosed || !s1.HeldClosed {
		t.Fatalf("s1: breaker %s, held_closed %v; want closed and held closed by breaker.max_open_share", s1.State, s1.HeldClosed)
	}
	clock.Advance(capCooldown) // no refusal for a cooldown: no longer held
	if b := h.endpoint("s1").Breaker; b.HeldClosed {
		t.Fatalf("s1 still held closed a cooldown after the cap's last refusal")
	}
}
