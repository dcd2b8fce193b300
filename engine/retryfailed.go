package engine

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// A read whose every candidate has had its attempt, with one failed and the
// others passed their deadlines unanswered (a hang, or an endpoint slow for
// good), would wait for the request's deadline and fail: seconds later than
// the failure a client of the endpoint that failed would have had at once.
// An HTTP 500 or a broken connection is often gone on the next ask, so the
// endpoint that failed is asked once more, beside the slow attempts.

// transientFailure says whether a read attempt that ended so may succeed
// if asked again: an HTTP error, a broken connection, a malformed answer,
// the endpoint's own JSON-RPC error. Not a 429 (its back-off says when),
// a method the endpoint cannot serve, or a deadline.
func transientFailure(o outcome) bool {
	return o == outHTTPError || o == outConnError || o == outInvalid || o == outEndpointError
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

// retryFailed asks retryOn once more, when it is still routable (its
// breaker closed, not drained, not backing off, not pinned elsewhere).
func (x *execution) retryFailed() bool {
	ep := x.retryOn
	if ep == nil || x.retried || x.p.pinned != nil || x.p.class != jsonrpc.ClassRead ||
		ep.drained.Load() || x.backingOff(ep) {
		return false
	}
	ok, trial := ep.breaker.Acquire()
	if !ok || trial {
		if ok {
			ep.breaker.Release(trial)
		}
		return false
	}
	x.retried = true
	x.start(&attempt{ep: ep, role: roleFailover})
	return true
}
