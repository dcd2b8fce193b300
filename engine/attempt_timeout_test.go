package engine

import (
	"testing"
	"time"
)

// Losers outrun by hedges on a silent endpoint must not stretch its attempt
// deadline: only answers say how long answers take.
func TestAttemptTimeout_LosersDoNotStretchItPastTheSlowestAnswer(t *testing.T) {
	e, _ := clockedEngine(t, 1, func(c *Config) {
		c.Breaker.AttemptTimeoutMin = 10 * time.Millisecond
	})
	ep := e.endpoints[0]
	s := ep.stats("eth_getBalance")
	for i := 0; i < 100; i++ {
		s.latency.Record(time.Duration(40+i%10) * time.Millisecond)
	}
	before, _ := e.attemptDeadline(ep, s)
	if before < 3*40*time.Millisecond || before > 3*50*time.Millisecond {
		t.Fatalf("deadline %s from answers of 40–49 ms, want 3 × p99", before)
	}
	// The endpoint hangs; hedges beat it twenty times at about 120 ms.
	for i := 0; i < 20; i++ {
		s.latency.RecordCensored(120 * time.Millisecond)
	}
	if got, _ := e.attemptDeadline(ep, s); got != before {
		t.Fatalf("deadline moved from %s to %s on losers alone", before, got)
	}
	// A slow answer does stretch it.
	for i := 0; i < 5; i++ {
		s.latency.Record(200 * time.Millisecond)
	}
	if got, _ := e.attemptDeadline(ep, s); got < 3*120*time.Millisecond {
		t.Fatalf("deadline %s after answers of 200 ms behind censored 120 ms losers", got)
	}
}
