package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/internal/testutil"
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
			passedDeadlines(att, int32(tc.silent/att.deadline)-1)
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

// A second request of the endpoint's own charged a hang since it last said
// anything (silentRequests) says hang whatever its answers show: a tail is
// one request's, and an endpoint that answers anything in between is not
// silent. Once 100 answers showed a long tail (5 of them 1.1 s: its own
// deadline 3.3 s, or a slow method's answers among a quick one's), one
// read's silence waited out that whole deadline before it counted again,
// where with 99 answers it counted beside the second silent request: a
// hung endpoint past 100 answers was charged once per request meanwhile.
func TestSilence_ASecondSilentRequestCountsOnceTheTailIsKnownToo(t *testing.T) {
	const deadline = 250 * time.Millisecond
	for _, tc := range []struct {
		name    string
		second  bool
		charged bool
	}{
		{"100 answers, 5 of them 1.1 s: one request silent 500 ms", false, false},
		{"100 answers, 5 of them 1.1 s: a second request silent past its deadline too, 500 ms", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clock := clockedEngine(t, 3, nil)
			a, b := e.endpoints[0], e.endpoints[1]
			for _, ep := range e.endpoints[1:] {
				for range 50 {
					ep.latency.Record(40 * time.Millisecond)
				}
			}
			for range 95 {
				a.latency.Record(40 * time.Millisecond)
			}
			for range 5 {
				a.latency.Record(1100 * time.Millisecond)
			}
			if _, n := a.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile); n < silenceSamples {
				t.Fatalf("%d answers: its tail not known", n)
			}
			for _, ep := range e.endpoints {
				ep.heard(clock.Now().Add(-2 * time.Second))
			}
			att, start, _ := chargeSilent(a, clock, deadline, tc.second)
			const silent = 2 * deadline
			passedDeadlines(att, int32(silent/deadline)-1)
			clock.Advance(start.Add(silent).Sub(clock.Now()))
			answerAt(e, b, start.Add(silent-100*time.Millisecond), 40*time.Millisecond)
			before := a.breaker.Info().ConsecutiveFailures
			e.stillSilent(att)
			got := a.breaker.Info().ConsecutiveFailures > before || a.breaker.State() == breaker.Open
			if got != tc.charged {
				t.Fatalf("silent %v (second request %t, 100 answers, 5 of them 1.1 s): charged %v, want %v", silent, tc.second, got, tc.charged)
			}
		})
	}
}

// chargeSilent starts an eth_getBalance attempt on a at the clock's now
// and takes it past its deadline, charged as a hang; with second, a second
// attempt started 100 ms later is charged too. It returns the first
// attempt, its start, and whether it settled at its deadline.
func chargeSilent(a *endpoint, clock *testutil.Clock, deadline time.Duration, second bool) (att *attempt, start time.Time, settled bool) {
	start = clock.Now()
	a.startAttempt(start)
	att = &attempt{ep: a, start: start, deadline: deadline, stats: a.stats("eth_getBalance")}
	clock.Advance(deadline)
	att.overdue.Store(true)
	att.passed.Store(1)
	settled = att.settle()
	att.chargeHang("no answer within the attempt deadline 250ms", clock.Now(), time.Second)
	if second {
		clock.Advance(100 * time.Millisecond)
		a.startAttempt(clock.Now())
		other := &attempt{ep: a, start: start.Add(100 * time.Millisecond), deadline: deadline, stats: a.stats("eth_getBalance")}
		other.overdue.Store(true)
		other.settle()
		other.chargeHang("no answer within the attempt deadline 250ms", clock.Now(), time.Second)
	}
	return att, start, settled
}

// passedDeadlines sets att as stillSilent leaves it after the n-th
// deadline it passed: the next one judged is the (n+1)-th.
func passedDeadlines(att *attempt, n int32) {
	att.passed.Store(n)
	att.dueAt.Store(att.start.Add(time.Duration(n) * att.deadline).UnixNano())
}
