package engine

// A cold endpoint's race deadline, borrowed from the pool's answers to the
// method, and the later deadline its silence is judged at.

import (
	"time"
)

// deadlineBorrowed: the endpoint has answered too few times to learn from
// (cold), the pool's other endpoints have answered the method (or, for a
// method none of them has answered, anything): a read races the next
// candidate at the deadline their answers give, and the endpoint is
// charged a hang only at its cold deadline.
const deadlineBorrowed = "borrowed"

// poolEndpointQuantile is the highest of the answer quantiles the other
// endpoints' answers to every method give (at least one answer each); ok is
// false when none has answered anything.
func (e *Engine) poolEndpointQuantile(ep *endpoint) (time.Duration, bool) {
	var best time.Duration
	found := false
	for _, other := range e.endpoints {
		if other == ep {
			continue
		}
		if q, n := other.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile); n > 0 {
			best, found = max(best, q), true
		}
	}
	return best, found
}

// raceDeadline is a read attempt's deadline (race: where the next
// candidate starts beside it) and where its silence is judged (judge:
// charged to its breaker as a hang). They differ here only while the
// endpoint is cold and another endpoint has answered (raceCeiling may
// part them later). An endpoint hung before it answered five times kept
// its cold deadline (a third of the
// request's) for good, since a hang teaches it nothing: with the shipped
// config's sims, steady drained and tail hung from the start, 27 of 48
// reads that met tail in the first 10 s waited 3.33 s for flaky, which
// answers in 65 ms. Racing is cheap and safe (nothing is cut), so it
// starts at the pool's pace; a charge is a verdict on the endpoint, and a
// healthy slow one (1 s answers beside 50 ms ones) must not be judged by a
// fast peer's pace, so the verdict keeps the cold deadline.
func (e *Engine) raceDeadline(ep *endpoint, s *methodStats) (race, judge time.Duration, src string) {
	d, src := e.attemptDeadline(ep, s)
	if src != deadlineCold || s.shared {
		return d, d, src
	}
	peers, ok := e.poolAnswerQuantile(ep, s.method)
	if !ok {
		// A method none of the others has answered yet: the pace of their
		// answers to every method, never sooner than the endpoint's own few
		// answers took. A first read of a method after the endpoint hung
		// waited its cold deadline (3.3 s) for a peer that answers in 45 ms;
		// a method slow by nature costs at most a race beside it, no charge.
		if peers, ok = e.poolEndpointQuantile(ep); !ok {
			return d, d, src // nothing to borrow: the pool's only endpoint, or no other has answered anything
		}
		if q, n := ep.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile); n > 0 {
			peers = max(peers, q)
		}
	}
	if q, n := s.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile); n > 0 {
		peers = max(peers, q) // its own few answers: never raced sooner than they took
	}
	r, _ := e.deadlineAt(peers, e.methodLimit(s))
	if r >= d {
		return d, d, src
	}
	return r, d, deadlineBorrowed
}

// awaitsJudgement says whether a has raced at a borrowed deadline and its
// silence is still to be judged at its cold one.
func (a *attempt) awaitsJudgement() bool {
	return a.judgeAfter > a.deadline && !a.judged.Load()
}

// judgeDeadline is how long a's endpoint must stay silent for a to be
// charged a hang.
func (a *attempt) judgeDeadline() time.Duration {
	return max(a.deadline, a.judgeAfter)
}

// judgeBorrowed gives a, overdue since its borrowed deadline, the verdict
// attemptOverdue gives at an ordinary deadline, at its cold one.
func (e *Engine) judgeBorrowed(a *attempt) {
	if !a.judged.CompareAndSwap(false, true) || a.ended.Load() {
		return
	}
	now := e.now()
	a.dueAt.Store(a.start.Add(a.judgeAfter).UnixNano()) // the timer's own lateness is what excuse measures
	if !e.excusedHang(a, now) && a.settle() {
		e.chargeOverdue(a, a.judgeAfter, now)
	}
	e.letGoOnceJudged(a, now)
}
