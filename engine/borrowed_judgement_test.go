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
