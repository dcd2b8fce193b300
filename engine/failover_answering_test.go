package engine

import (
	"testing"
	"time"
)

// A deadline's race (a failover) goes to an endpoint that answers before
// one that does not, in the same tier: suspect (its latest attempt got no
// answer), or with work in flight and nothing said for longer than its
// pace. Two endpoints of three hung at once made a read wait out both
// their deadlines before the third, answering throughout, was asked.
func TestFailover_RaceGoesToAnAnsweringEndpointFirst(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	a, b, c := e.endpoints[0], e.endpoints[1], e.endpoints[2]
	for _, ep := range e.endpoints {
		for range 50 {
			ep.latency.Record(40 * time.Millisecond)
		}
		ep.heard(clock.Now())
	}
	x := &execution{e: e, order: []candidate{{ep: a}, {ep: b}, {ep: c}}, used: []bool{true, false, false}}
	if i := x.pick(true, true, false); i != 1 {
		t.Fatalf("every endpoint answering: race to candidate %d, want b (1) in the order", i)
	}
	// b has had a read in flight for 200 ms, five times its 40 ms median,
	// and said nothing: it goes after c.
	b.startAttempt(clock.Now())
	clock.Advance(200 * time.Millisecond)
	if i := x.pick(true, true, false); i != 2 {
		t.Fatalf("b quiet 200 ms with work in flight: race to candidate %d, want c (2)", i)
	}
	// b suspect instead (its latest attempt got no answer).
	b.endAttempts(1)
	b.suspect.Store(true)
	if i := x.pick(true, true, false); i != 2 {
		t.Fatalf("b suspect: race to candidate %d, want c (2)", i)
	}
	// Not a first attempt: the order holds.
	x.used[0] = false
	if i := x.pick(false, false, false); i != 0 {
		t.Fatalf("a primary: candidate %d, want a (0)", i)
	}
	x.used[0] = true
	// Every candidate left not answering: the order holds.
	c.suspect.Store(true)
	if i := x.pick(true, true, false); i != 1 {
		t.Fatalf("b and c suspect: race to candidate %d, want b (1)", i)
	}
}
