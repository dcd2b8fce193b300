package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// Panic routing with one endpoint backing off after a 429 and the other's
// breaker open, that endpoint silent for a cooldown (hung): the read goes
// first to the one backing off. It answered a moment ago and answers the
// read at once, as it would a direct client; the silent one costs the read
// its attempt deadline, after which its race went to the one backing off
// all the same, spending the same quota. With steady drained, tail hung
// and flaky backing off a method after one of its 2 % 429s, 258 of 1140
// reads in a minute went to tail first and were answered by flaky 430 ms
// later on average (3 s while tail's deadline was still its cold one),
// against flaky's own 67 ms.
func TestPanic_EndpointBackingOffGoesBeforeAnOpenBreakerGoneQuiet(t *testing.T) {
	e, clock := clockedEngine(t, 2, nil)
	a, b := e.endpoints[0], e.endpoints[1]
	for _, ep := range e.endpoints {
		for range fullSamples {
			ep.latency.Record(40 * time.Millisecond)
		}
	}
	// b's breaker opened, its trial failed (the cooldown doubles): open,
	// and nothing heard from b for longer than a cooldown.
	b.breaker.Trip("looks hung")
	clock.Advance(e.cfg.Breaker.Cooldown)
	b.breaker.Trip("trial failed")
	clock.Advance(e.cfg.Breaker.Cooldown / 2)
	if b.breaker.State() != breaker.Open {
		t.Fatalf("b's breaker %s, want open", b.breaker.State())
	}
	a.heard(clock.Now()) // its 429
	a.backOffWhole(clock.Now(), 0, e.cfg.Breaker.BackoffBase, e.cfg.Breaker.BackoffMax)

	r := e.rank("eth_getBalance", jsonrpc.ClassRead, false, false, 0, affinityPick{}, false)
	if !r.panic || len(r.order) != 2 {
		t.Fatalf("panic %v, %d candidates: want panic routing over both", r.panic, len(r.order))
	}
	if got := r.order[0].ep.Name; got != "a" {
		t.Errorf("b silent for 1.5 cooldowns, its breaker open, a backing off: first candidate %s, want a", got)
	}

	// b heard from within the cooldown (failing, but it answers): it keeps
	// its place before the back-off.
	b.heard(clock.Now())
	r = e.rank("eth_getBalance", jsonrpc.ClassRead, false, false, 0, affinityPick{}, false)
	if got := r.order[0].ep.Name; got != "b" {
		t.Errorf("b heard a moment ago: first candidate %s, want b", got)
	}
}
