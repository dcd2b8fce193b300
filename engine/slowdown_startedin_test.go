package engine

import (
	"testing"
	"time"
)

// An attempt sent while the pool was slow at once passes its deadline once
// the slowdown is over: the others answer new requests at their pace by
// then, and judged by that moment alone the endpoint was charged alone
// (1 run in 40 of TestPool_SlowdownOfEveryEndpointAtOnceOpensNoBreaker
// beside two busy loops: s0 opened 80 ms after a slowdown of 325 ms ended,
// and stayed open for its cooldown). Its deadline is the slowdown's.
func TestSlowdown_AnAttemptSentInThePoolsSlowdownIsExcusedAfterIt(t *testing.T) {
	const method = "eth_getBalance"
	setup := func() (*Engine, *attempt, time.Time) {
		e, clock, t0 := pacedEngine(t)
		// The pool is slow at once from t0 to t0+300ms.
		e.slow.note(e, "pool", "3 of 3 endpoints slow at once (a, b, c)", t0, 250*time.Millisecond)
		e.slow.note(e, "pool", "3 of 3 endpoints slow at once (a, b, c)", t0.Add(300*time.Millisecond), 300*time.Millisecond)
		a := e.endpoints[0]
		att := &attempt{ep: a, start: t0.Add(200 * time.Millisecond), deadline: 250 * time.Millisecond, stats: a.stats(method)}
		a.startAttempt(att.start)
		clock.Advance(450 * time.Millisecond) // att's deadline, the slowdown over
		now := clock.Now()
		// b and c answer at their pace requests sent after it ended.
		for _, ep := range e.endpoints[1:] {
			sent := &attempt{ep: ep, start: t0.Add(400 * time.Millisecond), deadline: time.Second, stats: ep.stats(method)}
			e.recordAnswer(sent, 20*time.Millisecond, t0.Add(420*time.Millisecond))
		}
		return e, att, now
	}

	e, att, now := setup()
	if kind, why := e.poolSlow(att, now); kind != "" {
		t.Fatalf("set-up: the moment alone says %q %q, want a's own (the slowdown over)", kind, why)
	}
	if kind := e.excuse(att, now); kind != "pool" {
		t.Fatalf("a's attempt, sent in the pool's slowdown, passed its deadline after it: %q, want the pool's", kind)
	}
	if last := e.slow.last; !last.Equal(att.start.Add(100 * time.Millisecond)) {
		t.Fatalf("the excuse moved the episode's end to %s, want it left where the pool's evidence put it", last)
	}

	// Sent after the slowdown's last excused deadline: a's own.
	e, att, now = setup()
	att.start = e.slow.last.Add(time.Millisecond)
	if kind := e.excuse(att, now.Add(time.Millisecond)); kind != "" {
		t.Fatalf("a's attempt sent after the slowdown: %q, want a's own", kind)
	}

	// Silent since before the slowdown began: hung, not slowed by it.
	e, att, now = setup()
	e.endpoints[0].heardAt.Store(e.slow.first.Add(-att.deadline - time.Millisecond).UnixNano())
	if kind := e.excuse(att, now); kind == "pool" || kind == "self" {
		t.Fatalf("a silent since before the slowdown: %q, want it charged", kind)
	}
}

// The slowdown was on before its first excused deadline: since the attempt
// that passed it was sent. An attempt sent in between, with a longer
// deadline than the others', passes it once they answer new requests at
// their pace again, and is the slowdown's too (stop 57: a deadline of
// 1.35 s beside 370 and 930 ms one, charged as a hang after a slowdown of
// the whole pool).
func TestSlowdown_AnAttemptSentBeforeTheSlowdownWasSeenIsExcusedAfterIt(t *testing.T) {
	const method = "eth_getBalance"
	e, clock, t0 := pacedEngine(t)
	// Seen at t0, by an attempt sent 250 ms before; over by t0+300ms.
	e.slow.note(e, "pool", "3 of 3 endpoints slow at once (a, b, c)", t0, 250*time.Millisecond)
	e.slow.note(e, "pool", "3 of 3 endpoints slow at once (a, b, c)", t0.Add(300*time.Millisecond), 300*time.Millisecond)
	a := e.endpoints[0]
	att := &attempt{ep: a, start: t0.Add(-100 * time.Millisecond), deadline: 550 * time.Millisecond, stats: a.stats(method)}
	a.startAttempt(att.start)
	clock.Advance(450 * time.Millisecond) // att's deadline, the slowdown over
	for _, ep := range e.endpoints[1:] {
		sent := &attempt{ep: ep, start: t0.Add(400 * time.Millisecond), deadline: time.Second, stats: ep.stats(method)}
		e.recordAnswer(sent, 20*time.Millisecond, t0.Add(420*time.Millisecond))
	}
	if kind := e.excuse(att, clock.Now()); kind != "pool" {
		t.Fatalf("a's attempt, sent 150 ms after the slowdown began and before it was seen, passed its deadline after it: %q, want the pool's", kind)
	}

	// Sent before the attempt that revealed it: a's own.
	att = &attempt{ep: a, start: t0.Add(-300 * time.Millisecond), deadline: 750 * time.Millisecond, stats: a.stats(method)}
	if kind := e.excuse(att, clock.Now()); kind == "pool" || kind == "self" {
		t.Fatalf("a's attempt sent before the slowdown began: %q, want it charged", kind)
	}
}
