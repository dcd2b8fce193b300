package engine

import "time"

// batchDeadline is an upstream batch's own deadline on ep, past which the
// batch is raced on the next endpoint, or its calls go alone beside it
// (sendWhole): twice limit, the attempt deadline of its slowest method (a
// node may run a batch one call after another), or what the round trips
// of ep's answered upstream batches give, as a read's answers give its
// deadline (breaker.attempt_timeout_factor × their
// breaker.attempt_timeout_quantile), when that is longer. Batches that ran
// past it run on to their answers (runOn, letGo), so it learns from them:
// a pool slower than its single calls' deadlines, or a node that runs a
// batch call after call, has its first batch raced, not every one.
//
// An endpoint that has answered too few upstream batches to learn from
// (minRouteSamples) takes what its few and every other endpoint's answered
// batches give (the highest of their quantiles), as a method's few
// answers borrow the pool's.
func (e *Engine) batchDeadline(ep *endpoint, limit time.Duration) time.Duration {
	own, quantile := 2*limit, e.cfg.Breaker.AttemptTimeoutQuantile
	q, n := ep.batchPace.AnswerQuantile(quantile)
	if n < minRouteSamples {
		for _, other := range e.endpoints {
			if other != ep {
				oq, on := other.batchPace.AnswerQuantile(quantile)
				q, n = max(q, oq), n+on
			}
		}
	}
	if n > 0 {
		own = max(own, time.Duration(float64(q)*e.cfg.Breaker.AttemptTimeoutFactor))
	}
	return own
}
