package engine

import (
	"testing"
	"time"
)

// Probes go to every endpoint in the same round, a moment apart. A hung
// endpoint's probe passing its deadline beside a second endpoint slow on
// its own (a heavy-tail answer in flight) and a third that answered its
// probe of the round at its pace is a hang, not "2 of 3 endpoints slow at
// once": the third's probe was sent a millisecond before the hung one's,
// and only an answer to a request sent after counted, so the hang was
// excused (1 run in 5 of the shipped config with a timeout fault).
func TestSlowdown_AProbeIsHungBesideTheOthersProbesOfItsRound(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	a, b, c := e.endpoints[0], e.endpoints[1], e.endpoints[2]
	for _, ep := range e.endpoints {
		for range 50 {
			ep.latency.Record(40 * time.Millisecond)
		}
		ep.heard(clock.Now().Add(-time.Millisecond))
	}
	round := clock.Now()
	probe := func(ep *endpoint, at time.Time, took time.Duration) {
		p := &attempt{ep: ep, start: at, deadline: 2 * time.Second, stats: ep.stats("eth_blockNumber")}
		e.recordAnswer(p, took, at.Add(took))
	}
	probe(c, round, 41*time.Millisecond) // c's probe of the round, sent first
	a.startAttempt(round.Add(time.Millisecond))
	att := &attempt{ep: a, start: round.Add(time.Millisecond), deadline: 2 * time.Second, stats: a.stats("eth_blockNumber")}
	clock.Advance(2*time.Second + time.Millisecond)
	now := clock.Now()
	b.overdueAt.Store(now.Add(-100 * time.Millisecond).UnixNano()) // b slow on its own
	c.heard(now.Add(-100 * time.Millisecond))                      // an answer of another method: no proof of eth_blockNumber's pace
	if kind, why := e.poolSlow(att, now); kind != "hung" {
		t.Fatalf("a's probe unanswered, c answered its probe of the round in 41 ms (its median 40 ms): %q %q, want hung", kind, why)
	}

	// The pool slow all the same: c's probe of the round took ten times its
	// pace. Still the pool's.
	e2, clock2 := clockedEngine(t, 3, nil)
	for _, ep := range e2.endpoints {
		for range 50 {
			ep.latency.Record(40 * time.Millisecond)
		}
		ep.heard(clock2.Now().Add(-time.Millisecond))
	}
	round = clock2.Now()
	slow := &attempt{ep: e2.endpoints[2], start: round, deadline: 2 * time.Second, stats: e2.endpoints[2].stats("eth_blockNumber")}
	e2.recordAnswer(slow, 400*time.Millisecond, round.Add(400*time.Millisecond))
	e2.endpoints[0].startAttempt(round.Add(time.Millisecond))
	att = &attempt{ep: e2.endpoints[0], start: round.Add(time.Millisecond), deadline: 2 * time.Second, stats: e2.endpoints[0].stats("eth_blockNumber")}
	clock2.Advance(2*time.Second + time.Millisecond)
	now = clock2.Now()
	e2.endpoints[1].overdueAt.Store(now.Add(-100 * time.Millisecond).UnixNano())
	e2.endpoints[2].heard(now.Add(-100 * time.Millisecond))
	if kind, why := e2.poolSlow(att, now); kind != "pool" {
		t.Fatalf("c's probe ten times its pace: %q %q, want the pool's", kind, why)
	}
	// An answer at pace that came before a's probe was sent says nothing.
	early := &attempt{ep: e2.endpoints[2], start: round.Add(-100 * time.Millisecond), deadline: 2 * time.Second, stats: e2.endpoints[2].stats("eth_blockNumber")}
	e2.recordAnswer(early, 40*time.Millisecond, round.Add(-60*time.Millisecond))
	if kind, why := e2.poolSlow(att, now); kind != "pool" {
		t.Fatalf("c answered at pace before a's probe was sent: %q %q, want the pool's", kind, why)
	}
}
