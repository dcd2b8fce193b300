package engine

import (
	"testing"
	"time"
)

// A cold endpoint raced at a borrowed deadline is judged at its cold one,
// and only a stall of rpcdash's own as long as half of that excuses its
// silence: a stall of half the borrowed deadline (137 and 188 ms on a busy
// 2-core machine, against a 250 ms borrowed deadline) explains no 1.67 s
// of silence, yet excused the hung endpoint's charges, and its breaker
// stayed closed after the breaker.failures reads that met it.
func TestColdDeadline_BorrowedJudgementIsExcusedOnlyByAStallOfHalfTheColdDeadline(t *testing.T) {
	judge := func(stall time.Duration) *attempt {
		e, clock := clockedEngine(t, 2, nil)
		hung, peer := e.endpoints[0], e.endpoints[1]
		cold := e.coldDeadline(e.cfg.Server.RequestTimeout)
		start := clock.Now()
		a := &attempt{ep: hung, start: start, deadline: 250 * time.Millisecond, judgeAfter: cold, stats: hung.stats("eth_getBalance")}
		hung.startAttempt(start)
		if !a.awaitsJudgement() {
			t.Fatalf("attempt raced at 250ms, judged at %s: awaits no judgement", cold)
		}
		// The peer answers at its pace, before and after a started (the race).
		for i := range 6 {
			answerAt(e, peer, start.Add(-time.Duration(6-i)*100*time.Millisecond), 20*time.Millisecond)
		}
		answerAt(e, peer, start.Add(250*time.Millisecond), 20*time.Millisecond)
		clock.Advance(cold)
		e.lag.add(time.Now(), stall)
		e.judgeBorrowed(a)
		return a
	}
	cold := Default().Server.RequestTimeout / 3
	for _, stall := range []time.Duration{140 * time.Millisecond, 190 * time.Millisecond, cold/2 - 100*time.Millisecond} {
		if a := judge(stall); a.excused.Load() || !a.charged.Load() || a.ep.breaker.Info().ConsecutiveFailures != 1 {
			t.Errorf("silent for the cold deadline %s with a %s stall: excused %v, charged %v, breaker failures %d; want charged",
				cold.Round(time.Millisecond), stall, a.excused.Load(), a.charged.Load(), a.ep.breaker.Info().ConsecutiveFailures)
		}
	}
	// A stall of half the cold deadline may have hidden its answer: excused.
	if a := judge(cold/2 + 100*time.Millisecond); !a.excused.Load() || a.charged.Load() {
		t.Errorf("a %s stall within the cold deadline %s: excused %v, charged %v; want excused", cold/2+100*time.Millisecond, cold.Round(time.Millisecond), a.excused.Load(), a.charged.Load())
	}
}

// Past its cold deadline's verdict, a cold endpoint's further silence is
// judged a borrowed deadline after that verdict, and the deadline it passed
// is that one: counted from the start as whole borrowed deadlines (the
// second at 500 ms), it looked passed 3.08 s late at 3.58 s under the
// default 10 s request deadline, and the silence was excused as "rpcdash
// itself stalled for 3.084s", a slowdown of rpcdash's own that did not
// happen (seen after an unreachable fault, with clients' p99 at 60 ms),
// and the hung endpoint's charge was forgiven.
func TestColdDeadline_SilenceAfterTheBorrowedVerdictIsNoStallOfRpcdashs(t *testing.T) {
	e, clock := clockedEngine(t, 2, nil)
	hung, peer := e.endpoints[0], e.endpoints[1]
	cold := e.coldDeadline(e.cfg.Server.RequestTimeout)
	clock.Advance(time.Second) // the endpoints were last heard at the engine's start
	start := clock.Now()
	a := &attempt{ep: hung, start: start, deadline: 250 * time.Millisecond, judgeAfter: cold, stats: hung.stats("eth_getBalance")}
	hung.startAttempt(start)
	for i := range 6 {
		answerAt(e, peer, start.Add(-time.Duration(6-i)*100*time.Millisecond), 20*time.Millisecond)
	}
	a.overdue.Store(true)
	a.passed.Store(1)
	clock.Advance(cold)
	e.judgeBorrowed(a)
	if !a.charged.Load() {
		t.Fatalf("silent for its cold deadline %s beside a peer answering: not charged", cold.Round(time.Millisecond))
	}
	answerAt(e, peer, clock.Now().Add(100*time.Millisecond), 20*time.Millisecond)
	clock.Advance(a.deadline)
	e.stillSilent(a)
	if s := e.Snapshot().Slowdown; s != nil {
		t.Errorf("silent a borrowed deadline past its verdict: a slowdown noted: %s: %s", s.Kind, s.Reason)
	}
	if got := hung.breaker.Info().ConsecutiveFailures; got != 2 {
		t.Errorf("breaker failures %d after the verdict and a further deadline of silence, want 2", got)
	}
}
