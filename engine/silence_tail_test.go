package engine

import (
	"testing"
	"time"
)

// One attempt's silence past its first deadline counts again only once it
// outlasts the endpoint's own deadline over answers enough to know its tail
// (silenceSamples). A method's deadline may rest on 5 answers, none slow:
// the shipped config's tail endpoint had its breaker opened 2 s after start
// by one 762 ms answer, charged at three 253 ms deadlines while the others
// answered at their pace.
func TestSilence_OneSlowAnswerIsNoHangUntilTheEndpointsTailIsKnown(t *testing.T) {
	answers := func(fast, slow int) []time.Duration {
		var d []time.Duration
		for range fast {
			d = append(d, 40*time.Millisecond)
		}
		for range slow {
			d = append(d, 1100*time.Millisecond)
		}
		return d
	}
	for _, tc := range []struct {
		name    string
		answers []time.Duration // the endpoint's before the attempt
		silent  time.Duration
		charged bool
	}{
		{"10 answers, none slow: its tail unknown", answers(10, 0), 750 * time.Millisecond, false},
		{"100 answers, 5 of them 1.1 s: silent for less than 3 × that", answers(95, 5), 1250 * time.Millisecond, false},
		{"100 answers, 5 of them 1.1 s: silent past 3 × that", answers(95, 5), 3500 * time.Millisecond, true},
		{"100 answers at 40 ms: silent 750 ms", answers(100, 0), 750 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clock := clockedEngine(t, 3, nil)
			a, b := e.endpoints[0], e.endpoints[1]
			for _, ep := range e.endpoints[1:] {
				for range 50 {
					ep.latency.Record(40 * time.Millisecond)
				}
			}
			for _, d := range tc.answers {
				a.latency.Record(d)
			}
			for _, ep := range e.endpoints {
				ep.heard(clock.Now().Add(-2 * time.Second))
			}
			start := clock.Now()
			a.startAttempt(start)
			att := &attempt{ep: a, start: start, deadline: 250 * time.Millisecond, stats: a.stats("eth_getBalance")}
			att.overdue.Store(true) // charged at its first deadline
			// stillSilent runs at each deadline: this one is the last of tc.silent.
			att.passed.Store(int32(tc.silent/att.deadline) - 1)
			clock.Advance(tc.silent)
			answerAt(e, b, start.Add(tc.silent-100*time.Millisecond), 40*time.Millisecond)
			e.stillSilent(att)
			got := a.breaker.Info().ConsecutiveFailures == 1
			if got != tc.charged {
				t.Fatalf("silent %v: charged %v, want %v", tc.silent, got, tc.charged)
			}
		})
	}
}
