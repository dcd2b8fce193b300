package engine

import (
	"testing"
	"time"
)

// Endpoints whose last attempts passed their deadlines unanswered, and that
// have said nothing since, are slow with the pool even once they have no
// work in flight: the whole pool hung (every sim in mode hang, no client
// traffic but probes), a's probe, sent off the others' round, passed its
// deadline 2.25 s after theirs had; counted as a's alone, it opened a's
// breaker ("3 failures in a row, last: probe: no answer within 2s") while
// nothing in the pool answered anything. One that has answered since its
// deadline passed is not slow.
func TestSlowdown_EndpointsSilentSinceTheirDeadlinePassedAreSlowWithThePool(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	a, b, c := e.endpoints[0], e.endpoints[1], e.endpoints[2]
	start := clock.Now()
	for _, ep := range e.endpoints {
		ep.heard(start)
	}
	// b's and c's probes of the round passed their 2 s deadlines unanswered
	// and were cut: nothing in flight since.
	clock.Advance(2 * time.Second)
	b.overdueAt.Store(clock.Now().UnixNano())
	c.overdueAt.Store(clock.Now().UnixNano())
	// a's probe, sent half a second later, passes its deadline now.
	clock.Advance(500 * time.Millisecond)
	att := &attempt{ep: a, deadline: 2 * time.Second, start: clock.Now()}
	clock.Advance(2*time.Second + 250*time.Millisecond)
	now := clock.Now()
	if kind, why := e.poolSlow(att, now); kind != "pool" || why != "3 of 3 endpoints slow at once (a, b, c)" {
		t.Fatalf("every endpoint silent since its last deadline passed: %q %q, want 3 of 3 slow at once", kind, why)
	}
	// b and c answered since: a's silence is its own.
	b.heard(now.Add(-100 * time.Millisecond))
	c.heard(now.Add(-100 * time.Millisecond))
	if kind, why := e.poolSlow(att, now); kind != "" {
		t.Fatalf("b and c answered after their deadlines: a's deadline excused: %q %q", kind, why)
	}
}
