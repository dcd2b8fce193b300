package engine

import "time"

// batchDeadline is an upstream batch's own deadline on ep, past which the
// batch is raced on the next endpoint while it runs on (sendWhole): twice
// limit, the attempt deadline of its slowest method (a node may run a
// batch one call after another), or, once ep has answered enough upstream
// batches, what their round trips give as a read's answers give its
// deadline (breaker.attempt_timeout_factor × their
// breaker.attempt_timeout_quantile), when that is longer. Learnt from
// batches that ran past it and answered, so that a pool slower than its
// single calls' deadlines, or a node that runs a batch call after call,
// does not have every batch raced (each sent twice) for as long as it
// lasts.
//
// An endpoint that has answered too few upstream batches to learn from
// takes what every endpoint's answered batches give together (the highest
// of their quantiles), as a method's few answers borrow the pool's: the
// batches of a slow pool go to one endpoint and then another, and each
// was raced until it had answered enough on its own.
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
	if n >= minRouteSamples {
		own = max(own, time.Duration(float64(q)*e.cfg.Breaker.AttemptTimeoutFactor))
	}
	return own
}
