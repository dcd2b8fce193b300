package engine

// An attempt's own deadline, learnt from the endpoint's latency for the
// method; passing it races the next attempt and does not cut this one.

import "time"

// Where an attempt deadline comes from, for the Snapshot.
const (
	deadlineCold    = "cold"    // too few answers yet: a third of the request's deadline
	deadlineLearned = "learned" // factor × the quantile of the answers
	deadlineFew     = "few"     // too few answers to learn from: what the method's few answers give, its own and other endpoints'
	deadlineFloor   = "floor"   // raised to breaker.attempt_timeout_min
	deadlineCeiling = "ceiling" // cut to the request's deadline
)

// coldDeadline is an attempt's deadline while too few answers are known:
// room for two more attempts beside it within the request's deadline limit.
func (e *Engine) coldDeadline(limit time.Duration) time.Duration {
	return min(max(limit/3, e.cfg.Breaker.AttemptTimeoutMin), limit)
}

// attemptDeadline is an attempt's own deadline and where it comes from: a
// high quantile of the endpoint's recent latency for the method times a
// factor, clamped to [breaker.attempt_timeout_min, the method's request
// deadline]. Passing it does not cut a read: it charges the endpoint with a
// hang and starts the next attempt beside it (attemptOverdue, run).
//
// Censored observations
// (attempts outrun by a hedge or a deadline race) count, so that cutting the
// slow attempts short does not pull the quantile down, but only up to the
// slowest answer the endpoint actually gave: a hung endpoint's losers say
// nothing about how long its answers take, and letting them in would
// stretch its deadline with every attempt that beat it. Slow answers reach
// the window because no read is cut at its deadline, and because one
// overdue loser per endpoint at a time runs on to its answer (stopRest).
//
// A method the endpoint has answered too few times to learn from takes the
// deadline its few answers and the other endpoints' answers to it give,
// when there are any, never below what the endpoint's answers to every
// method give. A method that takes seconds by nature (a trace) would
// otherwise pass the deadline of the endpoint's quick reads on every
// attempt until it had answered enough: raced on a second endpoint each
// time (twice the cost of the dearest calls) and counted against the
// breaker as a hang. A method no
// endpoint has answered yet has only the endpoint's deadline to go by (one
// race, rather than a long wait on an endpoint that may have hung).
func (e *Engine) attemptDeadline(ep *endpoint, s *methodStats) (time.Duration, string) {
	limit := e.methodLimit(s)
	q, n := s.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile)
	if n >= minRouteSamples {
		return e.deadlineAt(q, limit)
	}
	own, src := e.endpointDeadline(ep)
	if s.shared {
		return own, src
	}
	few, known := q, n > 0
	if borrowed, ok := e.poolAnswerQuantile(ep, s.method); ok {
		few, known = max(few, borrowed), true
	}
	if known {
		if d, fsrc := e.deadlineAt(few, limit); d > own {
			if fsrc == deadlineLearned {
				fsrc = deadlineFew
			}
			return d, fsrc
		}
	}
	return own, src
}

// methodLimit is the request deadline attempts of the method run under.
func (e *Engine) methodLimit(s *methodStats) time.Duration {
	if s.shared {
		return e.cfg.Server.RequestTimeout
	}
	return e.requestTimeout(s.method)
}

// poolAnswerQuantile is the highest of the answer quantiles the other
// endpoints' answers to method give (at least one answer each); ok is false
// when none has answered it.
func (e *Engine) poolAnswerQuantile(ep *endpoint, method string) (time.Duration, bool) {
	var best time.Duration
	found := false
	for _, other := range e.endpoints {
		if other == ep {
			continue
		}
		st, ok := other.methods.lookup(method)
		if !ok {
			continue
		}
		if q, n := st.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile); n > 0 {
			best, found = max(best, q), true
		}
	}
	return best, found
}

// endpointDeadline is the attempt deadline ep's answers to every method
// together give: the fallback for a method it has answered too few times,
// and the yardstick of its own slowness (poolSlow).
func (e *Engine) endpointDeadline(ep *endpoint) (time.Duration, string) {
	limit := e.cfg.Server.RequestTimeout
	q, n := ep.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile)
	if n < minRouteSamples {
		return e.coldDeadline(limit), deadlineCold
	}
	return e.deadlineAt(q, limit)
}

// deadlineAt is the deadline for an endpoint whose latency quantile is q,
// under the request deadline limit.
func (e *Engine) deadlineAt(q, limit time.Duration) (time.Duration, string) {
	b := e.cfg.Breaker
	d := time.Duration(float64(q) * b.AttemptTimeoutFactor)
	switch {
	case d < b.AttemptTimeoutMin:
		return min(b.AttemptTimeoutMin, limit), deadlineFloor
	case d > limit:
		return limit, deadlineCeiling
	}
	return d, deadlineLearned
}
