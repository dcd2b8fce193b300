package engine

// A read whose every candidate has had its attempt, with one failed and the
// others passed their deadlines unanswered (a hang, or an endpoint slow for
// good), would wait for the request's deadline and fail: seconds later than
// the failure a client of the endpoint that failed would have had at once.
// An HTTP 500 or a broken connection is often gone on the next ask, so the
// endpoint that failed is asked once more, beside the slow attempts.

// transientFailure says whether a read attempt that ended so may succeed
// if asked again: an HTTP error, a broken connection, a malformed answer,
// the endpoint's own JSON-RPC error, or a 429 once its back-off is over (as
// a client honouring Retry-After asks again). Not a method the endpoint
// cannot serve, or a deadline.
func transientFailure(o outcome) bool {
	return o == outHTTPError || o == outConnError || o == outInvalid || o == outEndpointError || o == outRateLimit
}

// allOverdue: attempts are live and every one has passed its deadline
// unanswered.
func (x *execution) allOverdue() bool {
	for _, a := range x.live {
		if !a.overdue.Load() {
			return false
		}
	}
	return len(x.live) > 0
}

// retryFailed asks retryOn once more (started) when it is still routable:
// its breaker closed, not drained, not pinned elsewhere. later: it is
// backing off after a 429, and may be asked once that is over.
func (x *execution) retryFailed() (started, later bool) {
	ep := x.retryOn
	if ep == nil || x.retried || x.p.pinned != nil || ep.drained.Load() { // retryOn: reads only (run)
		return false, false
	}
	if x.backingOff(ep) {
		return false, true
	}
	ok, trial := ep.breaker.Acquire()
	if !ok || trial {
		if ok {
			ep.breaker.Release(trial)
		}
		return false, false
	}
	x.retried = true
	x.start(&attempt{ep: ep, role: roleFailover})
	return true, false
}

// retryNow is retryFailed for a failure that ends while every live attempt
// is overdue (their races have found no one): one of them is held to look
// again a deadline later when the endpoint is backing off.
func (x *execution) retryNow(hold func(*attempt)) bool {
	started, later := x.retryFailed()
	if later {
		hold(x.live[0])
	}
	return started
}
