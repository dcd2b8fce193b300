package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// A slowdown of every endpoint at once passes only the deadlines short
// enough for it: a quick, steady endpoint's is the 250 ms floor, one whose
// answers have a tail has three times its p99. The others answer late,
// within their deadlines: neither overdue nor silent, they were not counted
// slow, and the endpoint with the shortest deadline, as slow as they were,
// was charged alone and its breaker opened (1 run in 40 of
// TestPool_SlowdownOfEveryEndpointAtOnceOpensNoBreaker beside two busy
// loops: deadlines 250, 504 and 550 ms learnt, a slowdown of 325 ms).
// Late answers are slow ones when no endpoint answers at its pace; one
// that does proves the moment was not slow for everyone.
func TestSlowdown_OthersAnsweringLateWithinLongerDeadlinesAreSlowAtOnce(t *testing.T) {
	const method = "eth_getBalance"
	setup := func(took time.Duration) (*Engine, *attempt, time.Time) {
		e, clock, t0 := pacedEngine(t)
		for _, ep := range e.endpoints {
			ep.startAttempt(t0)
		}
		// The slowdown begins at t0: every endpoint answers took later.
		a := e.endpoints[0]
		att := &attempt{ep: a, start: t0.Add(100 * time.Millisecond), deadline: 250 * time.Millisecond, stats: a.stats(method)}
		clock.Advance(350 * time.Millisecond) // att's deadline
		now := clock.Now()
		for _, ep := range e.endpoints {
			sent := &attempt{ep: ep, start: t0, deadline: time.Second, stats: ep.stats(method)}
			e.recordAnswer(sent, took, t0.Add(took))
		}
		return e, att, now
	}

	e, att, now := setup(345 * time.Millisecond)
	if kind, why := e.poolSlow(att, now); kind != "pool" {
		t.Fatalf("a overdue, b and c answering 345 ms late (pace 80 ms) within their deadlines: %q %q, want the pool's", kind, why)
	}

	// c answers at its pace a request in flight when att was sent: the
	// moment was not slow for everyone, and a is charged alone.
	e, att, now = setup(345 * time.Millisecond)
	c := e.endpoints[2]
	e.recordAnswer(&attempt{ep: c, start: att.start.Add(-10 * time.Millisecond), deadline: time.Second, stats: c.stats(method)},
		20*time.Millisecond, att.start.Add(10*time.Millisecond))
	c.heard(now.Add(-5 * time.Millisecond)) // and its late answers since
	if kind, why := e.poolSlow(att, now); kind != "" {
		t.Fatalf("c answered at its pace after att was sent: %q %q, want a's own", kind, why)
	}

	// Late answers that came before att was sent say nothing of its moment.
	e, att, now = setup(345 * time.Millisecond)
	att.start = now.Add(-4 * time.Millisecond)
	att.deadline = 4 * time.Millisecond
	if kind, why := e.poolSlow(att, now); kind != "" {
		t.Fatalf("b and c answered late before att was sent: %q %q, want a's own", kind, why)
	}

	// Late, but quicker than a's deadline: a is worse than they are (a
	// loaded machine's 70 ms answers, 11 ms at best, beside an endpoint
	// slowed to 510 ms excused it).
	e, att, now = setup(120 * time.Millisecond)
	for _, ep := range e.endpoints[1:] {
		ep.heard(now.Add(-5 * time.Millisecond)) // answering all along
	}
	if kind, why := e.poolSlow(att, now); kind != "" {
		t.Fatalf("b and c answering in 120 ms (pace 80 ms), a silent past its 250 ms deadline: %q %q, want a's own", kind, why)
	}

	// b and c answered late another method only: a read of a method few
	// reads ask met the slowdown where the others had answered none of it
	// since att was sent (1 run in 6 of the shipped config, every endpoint
	// 3 s slower: tail opened mid-slowdown).
	e, clock, t0 := pacedEngine(t)
	for _, ep := range e.endpoints {
		ep.startAttempt(t0)
	}
	a := e.endpoints[0]
	att = &attempt{ep: a, start: t0.Add(100 * time.Millisecond), deadline: 250 * time.Millisecond, stats: a.stats("eth_getBlockByNumber")}
	clock.Advance(350 * time.Millisecond)
	now = clock.Now()
	for _, ep := range e.endpoints[1:] {
		sent := &attempt{ep: ep, start: t0, deadline: time.Second, stats: ep.stats(method)}
		e.recordAnswer(sent, 345*time.Millisecond, t0.Add(345*time.Millisecond))
	}
	if kind, why := e.poolSlow(att, now); kind != "pool" {
		t.Fatalf("a's eth_getBlockByNumber overdue, b and c answering eth_getBalance 345 ms late (pace 80 ms): %q %q, want the pool's", kind, why)
	}
}

// pacedEngine is a clocked engine of three endpoints, each with 50 answers
// of 20 ms (its pace: 80 ms), last heard a millisecond before t0, its
// clock's now.
func pacedEngine(t *testing.T) (*Engine, *testutil.Clock, time.Time) {
	e, clock := clockedEngine(t, 3, nil)
	t0 := clock.Now()
	for _, ep := range e.endpoints {
		for range 50 {
			ep.latency.Record(20 * time.Millisecond)
		}
		ep.heard(t0.Add(-time.Millisecond))
	}
	return e, clock, t0
}
