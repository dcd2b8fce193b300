package engine

import (
	"fmt"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// A half-open trial stands for the client reads its endpoint would take
// back, and an answer is not enough to pass it: it must come at about the
// endpoint's usual pace. Judged by its deadline alone (a third of the
// request timeout for a probe, the attempt deadline for a read), a 40 ms
// endpoint under a 500 ms latency fault passed every trial and was
// readmitted at every cooldown, "closed" for a second before it opened
// again: the answers that showed the slowness (hedged attempts kept running
// as tail samples) had raised its attempt deadline, a tail measure, to the
// slow pace before its breaker opened.
//
// The usual pace is the body of its answers (the router's figure without
// its last answers: median, blended with the p90), which a few slow ones
// do not move; its pace deadline is breaker.attempt_timeout_factor times
// that, clamped as attempt deadlines are. A trial fails when it answers
// past that and so do its endpoint's last answers (the median of the last
// three, this one included): one answer from a heavy tail is the
// endpoint's usual self, a slowed endpoint is slow every time. An endpoint
// no slower than the rest of the pool is no reason to keep out: when the
// fastest other routable endpoint is slow now too (a pool-wide slowdown),
// the deadline its recent pace gives holds instead, if longer. With no
// pace known, or no other endpoint to take its reads, an answer passes.

// paceDeadline is the deadline an endpoint's usual pace for the method
// gives, and the last answers of the same figure; false before enough
// answers.
func (e *Engine) paceDeadline(ep *endpoint, s *methodStats) (time.Duration, *lastAnswers, bool) {
	usual, _, last, ok := ep.usualLatency(s)
	if !ok {
		return 0, nil, false
	}
	d, _ := e.deadlineAt(usual, e.methodLimit(s))
	return d, last, true
}

// trialPace is how long a trial's answer may take: the larger of the
// endpoint's pace deadline and the one the fastest other routable
// endpoint's recent pace gives. ok is false when there is nothing to judge
// by (see above). last: the endpoint's last answers of its pace's figure.
func (e *Engine) trialPace(ep *endpoint, s *methodStats, now time.Time) (time.Duration, *lastAnswers, bool) {
	own, last, ok := e.paceDeadline(ep, s)
	if !ok {
		return 0, nil, false
	}
	best, found := 0.0, false
	for _, other := range e.endpoints {
		if other == ep || !e.routable(other, now) {
			continue
		}
		if fig, ok := other.routeLatency(s.method); ok && (!found || fig.lat < best) {
			best, found = fig.lat, true
		}
	}
	if !found {
		return 0, nil, false
	}
	pool, _ := e.deadlineAt(time.Duration(best*float64(time.Millisecond)), e.methodLimit(s))
	return max(own, pool), last, true
}

// judgeTrialPace marks a half-open trial whose answer, in took, failed it
// for its pace (slowTrial; its verdict is given in answered). Its latency
// is among the endpoint's last answers already. A trial charged at its
// deadline has failed already, and one that lands on a closed breaker
// (another trial closed it) is no trial any more.
func (e *Engine) judgeTrialPace(a *attempt, took time.Duration) {
	if !a.trial || a.charged.Load() || took < e.cfg.Breaker.AttemptTimeoutMin || a.ep.breaker.State() == breaker.Closed {
		return
	}
	pace, last, ok := e.trialPace(a.ep, a.stats, e.now())
	if !ok || took <= pace {
		return
	}
	recent, ok := last.median()
	if !ok || recent <= pace {
		return
	}
	a.failCause = fmt.Sprintf("answered in %s (its last answers %s), slower than its pace allows (%s)",
		took.Round(time.Millisecond), recent.Round(time.Millisecond), pace.Round(time.Millisecond))
	a.slowTrial.Store(true)
}
