package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

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

// allHung: attempts are live, and every one has passed its deadline, not
// excused (a pool slowdown, rpcdash's own), with its endpoint silent since
// it was asked (no answer to anything: a probe, another request). A slow
// endpoint answers its other work; a hung one says nothing, and waiting
// for it to the request's deadline only delays the failure a client of
// the endpoint that failed would have had at once.
func (x *execution) allHung() bool {
	for _, a := range x.live {
		if !a.overdue.Load() || a.excused.Load() || a.ep.heardAt.Load() >= a.start.UnixNano() {
			return false
		}
	}
	return len(x.live) > 0
}

// failBesideHangs ends a read that has nothing left to wait for but the
// request's deadline: an attempt failed, the endpoint that failed was
// asked again or cannot be (run asks before calling this), none is held
// to look again later (waiting), and every live attempt hangs (allHung).
// The answer is the one the request would have had at its deadline: one
// set aside, an endpoint's error answer, or the last failure.
func (x *execution) failBesideHangs(waiting bool) (result, bool) {
	if x.p.class != jsonrpc.ClassRead || x.last == "" || waiting || !x.allHung() {
		return result{}, false
	}
	if res, ok := x.heldAnswer(); ok {
		return res, true
	}
	return x.fail(fmt.Sprintf("all %d attempts failed or hung (%s: no answer past the attempt deadline); last: %s", x.sent, x.liveNames(), x.last)), true
}

// liveNames names the endpoints of the live attempts.
func (x *execution) liveNames() string {
	names := make([]string, 0, len(x.live))
	for _, a := range x.live {
		names = append(names, a.ep.Name)
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ", ")
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
