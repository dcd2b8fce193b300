package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A read whose every candidate has had its attempt, with one failed and the
// others passed their deadlines unanswered (a hang, or an endpoint slow for
// good), would wait for the request's deadline and fail: seconds later than
// the failure a client of the endpoint that failed would have had at once.
// An HTTP 500 or a broken connection is often gone on the next ask, so the
// endpoint that failed is asked again, beside the slow attempts, as often
// as its breaker takes for a passing trouble. When it cannot be asked again
// and the rest hang, the read fails then (failBesideHangs).

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

// hangs says whether every live attempt hangs: passed its deadline, not
// excused (a pool slowdown, rpcdash's own), its endpoint quiet with work in
// flight as long as a stale endpoint waits for it (staleQuiet), and no
// late answer of it within breaker.cooldown (one is the mark of an
// endpoint slow, not hung, whose answer is worth waiting for). later: all
// but the quiet have passed, so it may yet hang.
func (x *execution) hangs() (all, later bool) {
	now := x.e.now()
	for _, a := range x.live {
		ep := a.ep
		switch {
		case !a.overdue.Load() || a.excused.Load() || now.Sub(time.Unix(0, ep.lateAt.Load())) < x.e.cfg.Breaker.Cooldown:
			return false, false
		case ep.silentFor(now) < max(a.deadline, x.e.coldDeadline(x.e.requestTimeout(x.p.method))):
			later = true
		}
	}
	return len(x.live) > 0 && !later, later
}

// failBesideHangs ends a read that has nothing left to wait for but the
// request's deadline: an attempt failed, the endpoint that failed was
// asked again or cannot be (run asks before calling this), none is held
// to look again later (waiting), and every live attempt hangs. The answer
// is the one the request would have had at its deadline: one set aside, an
// endpoint's error answer, or the last failure. While the hangs have not
// been quiet long enough, one is held to look again a deadline later.
func (x *execution) failBesideHangs(waiting bool, hold func(*attempt)) (result, bool) {
	if x.p.class != jsonrpc.ClassRead || x.last == "" || waiting {
		return result{}, false
	}
	all, later := x.hangs()
	if later {
		hold(x.live[0])
	}
	if !all {
		return result{}, false
	}
	if res, ok := x.heldAnswer(); ok {
		return res, true
	}
	return x.fail(fmt.Sprintf("all %d attempts failed or hung (%s: nothing heard past the attempt deadline); last: %s", x.sent, x.liveNames(), x.last)), true
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

// retryFailed asks retryOn again (started) when it is still routable: its
// breaker closed, not drained, not pinned elsewhere; up to
// breaker.failures - 1 times (once at least), the failures in a row a
// breaker takes for a passing trouble, as a client of it retrying would
// ask. Not while an ask of it runs: that ask is the answer on its way, and
// another beside it one more request on the endpoint for the same answer
// (a slow ask passing its deadline had a third sent beside it, and a
// back-off's end and a hang's next look falling due together asked it
// twice in a millisecond). later: it is backing off after a 429, and may
// be asked once that is over.
func (x *execution) retryFailed() (started, later bool) {
	if !x.mayRetry() || x.asking(x.retryOn) {
		return false, false
	}
	ep := x.retryOn
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
	x.retried++
	x.start(&attempt{ep: ep, role: roleFailover})
	return true, false
}

// asking says whether an attempt of this request on ep is live.
func (x *execution) asking(ep *endpoint) bool {
	return slices.ContainsFunc(x.live, func(a *attempt) bool { return a.ep == ep })
}

// mayRetry says whether retryOn may be asked again, backing off or not.
func (x *execution) mayRetry() bool {
	ep := x.retryOn
	return ep != nil && x.retried < max(x.e.cfg.Breaker.Failures-1, 1) && x.p.pinned == nil && !ep.drained.Load() // retryOn: reads only (run)
}

// retryBeforeQuiet asks the endpoint that failed again (retryFailed) when
// the failover left is only an open breaker that hangs (hangsNow), or none
// is left and every attempt still running is on an endpoint that hangs: waiting
// costs the read that endpoint's attempt deadline before the endpoint that
// failed is asked again all the same. With steady drained and tail hung,
// each of flaky's 500s (5 %) held its read for tail's deadline, 2.2 s while
// cold, where a client of flaky asking again had its answer in 60 ms; and
// a 500 of flaky asked again beside tail waited tail's deadline (2.1 s)
// for its next ask. It is asked so once a request: 500s come in bursts,
// and asked again at once after each, three asks in a millisecond spent
// breaker.failures - 1 retries on one burst (2 client errors in a minute
// of the incident); a second 500 waits for the hang's deadline, as before.
func (x *execution) retryBeforeQuiet() bool {
	if x.p.class != jsonrpc.ClassRead || x.atOnce {
		return false
	}
	now := x.e.now()
	if i := x.pick(false, true, false); i >= 0 {
		if c := x.order[i]; c.tier != 2 || !x.e.hangsNow(c.ep, now) {
			return false
		}
	} else if !x.liveQuiet(now) {
		return false
	}
	started, _ := x.retryFailed()
	x.atOnce = started
	return started
}

// liveUnanswering: attempts are live and every one is on an endpoint that
// is not answering (unanswering: suspect, or quiet past its pace).
func (x *execution) liveUnanswering(now time.Time) bool {
	for _, a := range x.live {
		if !a.ep.unanswering(now) {
			return false
		}
	}
	return len(x.live) > 0
}

// liveQuiet: attempts are live and every one is on an endpoint that hangs
// (hangsNow).
func (x *execution) liveQuiet(now time.Time) bool {
	for _, a := range x.live {
		if !x.e.hangsNow(a.ep, now) {
			return false
		}
	}
	return len(x.live) > 0
}

// retryNow is retryFailed for a failure that ends while every live attempt
// is overdue (their races have found no one): one of them is held to look
// again a deadline later when the endpoint is backing off.
func (x *execution) retryNow(hold func(*attempt)) bool {
	started, later := x.retryFailed()
	if !started && (later || x.backOffLeft()) {
		hold(x.live[0])
	}
	return started
}
