package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
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

// A stall of rpcdash's own excuses an answering endpoint's overdue attempt,
// and takes back the deadlines charged since it started, except those of an
// endpoint silent through the stall while another answered at its pace
// after it: that endpoint's charges were judged hung through the same
// stall. Taken back, a hung endpoint's open breaker closed again, and
// client reads went to it.
func TestSlowdown_OwnStallForgivesNoHangOthersAnsweredThrough(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	hung, busy, c := e.endpoints[0], e.endpoints[1], e.endpoints[2]
	for _, ep := range e.endpoints {
		for range 50 {
			ep.latency.Record(40 * time.Millisecond)
		}
		ep.heard(clock.Now().Add(-2 * time.Second))
	}
	start := clock.Now()
	hung.startAttempt(start)
	busy.startAttempt(start)
	clock.Advance(time.Second)
	now := clock.Now()
	// A 600 ms stall that ended 500 ms ago; c answered a read sent 250 ms
	// ago in 42 ms.
	e.lag.add(time.Now().Add(-500*time.Millisecond), 600*time.Millisecond)
	answerAt(e, c, now.Add(-250*time.Millisecond), 42*time.Millisecond)
	for i := range e.cfg.Breaker.Failures {
		att := &attempt{ep: hung, deadline: time.Second, start: start, stats: hung.stats("eth_getBalance")}
		if e.excusedHang(att, now) {
			t.Fatalf("hang %d excused: %+v", i+1, e.slow.info())
		}
		att.settle()
		att.chargeHang("no answer within the attempt deadline 1s", now, e.cfg.Breaker.Cooldown)
	}
	if st := hung.breaker.State(); st != breaker.Open {
		t.Fatalf("hung's breaker %s after %d hangs", st, e.cfg.Breaker.Failures)
	}
	// busy answered another read since its overdue one started: the stall,
	// not busy, is the slow part.
	busy.heard(now.Add(-100 * time.Millisecond))
	overdue := &attempt{ep: busy, deadline: time.Second, start: start, stats: busy.stats("eth_getBalance")}
	if kind := e.excuse(overdue, now); kind != "self" {
		t.Fatalf("busy's overdue attempt through the stall: %q, want self", kind)
	}
	if st := hung.breaker.State(); st != breaker.Open {
		t.Fatalf("hung's breaker %s: the stall took back hangs c answered through", st)
	}

	// Without an answer of another endpoint after the stall, the stall may
	// have hidden hung's answers too: its charges are taken back, as before.
	e2, clock2 := clockedEngine(t, 3, nil)
	hung2, busy2 := e2.endpoints[0], e2.endpoints[1]
	for _, ep := range e2.endpoints {
		for range 50 {
			ep.latency.Record(40 * time.Millisecond)
		}
		ep.heard(clock2.Now().Add(-2 * time.Second))
	}
	start = clock2.Now()
	hung2.startAttempt(start)
	busy2.startAttempt(start)
	clock2.Advance(time.Second)
	now = clock2.Now()
	for range e2.cfg.Breaker.Failures {
		att := &attempt{ep: hung2, deadline: time.Second, start: start, stats: hung2.stats("eth_getBalance")}
		att.settle()
		att.chargeHang("no answer within the attempt deadline 1s", now, e.cfg.Breaker.Cooldown)
	}
	e2.lag.add(time.Now(), 600*time.Millisecond)
	busy2.heard(now.Add(-100 * time.Millisecond))
	overdue = &attempt{ep: busy2, deadline: time.Second, start: start, stats: busy2.stats("eth_getBalance")}
	if kind := e2.excuse(overdue, now); kind != "self" {
		t.Fatalf("busy2's overdue attempt through the stall: %q, want self", kind)
	}
	if st := hung2.breaker.State(); st != breaker.Closed {
		t.Fatalf("hung2's breaker %s: no answer after the stall shows it hung, its charges should be taken back", st)
	}
}
