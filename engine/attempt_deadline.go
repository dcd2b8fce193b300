package engine

// An attempt's own deadline, learnt from the endpoint's latency for the
// method; passing it races the next attempt and does not cut this one.

import "time"

// attemptTimeout is an attempt's own deadline: a high quantile of the
// endpoint's recent latency for the method times a factor, clamped to
// [breaker.attempt_timeout_min, server.request_timeout]. Passing it does not
// cut a read: it charges the endpoint with a hang and starts the next
// attempt beside it (attemptOverdue, run).
func (e *Engine) attemptTimeout(ep *endpoint, s *methodStats) time.Duration {
	d, _ := e.attemptDeadline(ep, s)
	return d
}

// Where an attempt deadline comes from, for the Snapshot.
const (
	deadlineCold    = "cold"    // too few answers yet: a third of the request's deadline
	deadlineLearned = "learned" // factor × the quantile of the answers
	deadlineFloor   = "floor"   // raised to breaker.attempt_timeout_min
	deadlineCeiling = "ceiling" // cut to server.request_timeout
)

// coldDeadline is an attempt's deadline while too few answers are known:
// room for two more attempts beside it within the request's deadline.
func (e *Engine) coldDeadline() time.Duration {
	limit := e.cfg.Server.RequestTimeout
	return min(max(limit/3, e.cfg.Breaker.AttemptTimeoutMin), limit)
}

// attemptDeadline is attemptTimeout with its source. Censored observations
// (attempts outrun by a hedge or a deadline race) count, so that cutting the
// slow attempts short does not pull the quantile down, but only up to the
// slowest answer the endpoint actually gave: a hung endpoint's losers say
// nothing about how long its answers take, and letting them in would
// stretch its deadline with every attempt that beat it. Slow answers reach
// the window because no read is cut at its deadline, and because one
// overdue loser per endpoint at a time runs on to its answer (stopRest).
func (e *Engine) attemptDeadline(ep *endpoint, s *methodStats) (time.Duration, string) {
	q, n := s.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile)
	if n < minRouteSamples {
		return e.endpointDeadline(ep)
	}
	return e.deadlineAt(q)
}

// endpointDeadline is the attempt deadline ep's answers to every method
// together give: the fallback for a method it has answered too few times,
// and the yardstick of its own slowness (poolSlow).
func (e *Engine) endpointDeadline(ep *endpoint) (time.Duration, string) {
	q, n := ep.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile)
	if n < minRouteSamples {
		return e.coldDeadline(), deadlineCold
	}
	return e.deadlineAt(q)
}

// deadlineAt is the deadline for an endpoint whose latency quantile is q.
func (e *Engine) deadlineAt(q time.Duration) (time.Duration, string) {
	b := e.cfg.Breaker
	limit := e.cfg.Server.RequestTimeout
	d := time.Duration(float64(q) * b.AttemptTimeoutFactor)
	switch {
	case d < b.AttemptTimeoutMin:
		return min(b.AttemptTimeoutMin, limit), deadlineFloor
	case d > limit:
		return limit, deadlineCeiling
	}
	return d, deadlineLearned
}
