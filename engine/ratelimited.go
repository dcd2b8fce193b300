package engine

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A request answered 429 is not sent on to an endpoint that is itself
// backing off (the whole endpoint, or the request's method on it): that
// endpoint said 429 a moment ago, and a read sent to every endpoint in turn
// would cost each provider a request per client call, spending the very
// quota that limits it, for an answer a direct client would not get either.
// Back-offs ending, or an endpoint not backing off, are still failed over
// to. When every attempt was answered 429, the client is told what a
// direct client of a limited provider is told: HTTP 429, a Retry-After and
// -32005, so that it backs off too rather than retrying at once.

// backingOff says whether ep is backing off for this request's method.
func (x *execution) backingOff(ep *endpoint) bool {
	return !ep.backoffEnd(x.p.method, x.e.now()).IsZero()
}

// waitsBackOff says whether candidate c is left alone for now because it
// is backing off for the method: after this request met a 429, or as a
// failover-only fallback (outside panic routing an endpoint backing off
// is asked only once its back-off is over).
func (x *execution) waitsBackOff(c candidate) bool {
	return (x.rateLimited > 0 || c.fallback && c.tier == 3) && x.backingOff(c.ep)
}

// backOffLeft says whether a candidate not yet asked is waiting for its
// back-off to end: a read whose other attempts hang looks again a deadline
// later rather than waiting for the request's deadline.
func (x *execution) backOffLeft() bool {
	for i, c := range x.order {
		if !x.used[i] && x.waitsBackOff(c) {
			return true
		}
	}
	return false
}

// backOffDue is when the earliest back-off that keeps an endpoint of this
// read waiting ends: the endpoint that failed, to be asked again
// (retryFailed) once its back-off and its pause are over (retryDue), or a
// candidate not asked yet that is backing off
// (waitsBackOff, or one panic routing put after the running attempt);
// zero when none does. A read whose one other endpoint hangs is raced to
// it then: after flaky's 429 (Retry-After 1 s) a read failed over to a
// hung tail waited tail's attempt deadline, up to 7 s, before flaky was
// asked again, where a client of flaky honouring the Retry-After had its
// answer in 1 s; a read sent to tail first (its breaker still closed,
// or panic routing), with flaky backing off for 0.2 s more, waited 2.85 s.
func (x *execution) backOffDue() time.Time {
	if x.p.class != jsonrpc.ClassRead {
		return time.Time{}
	}
	now := x.e.now()
	var due time.Time
	consider := func(end time.Time) {
		if !end.IsZero() && (due.IsZero() || end.Before(due)) {
			due = end
		}
	}
	if x.mayRetry() {
		consider(x.retryDue(now))
	}
	for i, c := range x.order {
		if !x.used[i] && (x.waitsBackOff(c) || c.tier == 3 && x.backingOff(c.ep)) {
			consider(c.ep.backoffEnd(x.p.method, now))
		}
	}
	return due
}

// failRateLimited ends a request whose every attempt was answered 429.
func (x *execution) failRateLimited() result {
	wait := x.retryAfter()
	msg := "rate limited: every endpoint that can take this request answered HTTP 429 or is backing off after one"
	if x.p.class != jsonrpc.ClassRead {
		msg = fmt.Sprintf("rate limited: asked to back off, by an HTTP 429 or a 503 with Retry-After (a %s request answered so is not sent on to another endpoint)", x.p.class)
	}
	msg += fmt.Sprintf("; retry after %ds; last: %s", int(wait/time.Second), x.last) + x.panicNote()
	res := x.failWith(&jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded, Message: msg})
	res.retryAfter = wait
	return res
}

// retryAfter is how long until an endpoint of the request's candidates may
// take its method again: the soonest end of their back-offs, in whole
// seconds rounded up, at least one.
func (x *execution) retryAfter() time.Duration {
	now := x.e.now()
	var soonest time.Duration
	for i, c := range x.order {
		end := c.ep.backoffEnd(x.p.method, now)
		if end.IsZero() {
			soonest = 0
			break
		}
		if d := end.Sub(now); i == 0 || d < soonest {
			soonest = d
		}
	}
	secs := (soonest + time.Second - 1) / time.Second
	return max(secs, 1) * time.Second
}

// retryAfterHeader is a Retry-After value in whole seconds.
func retryAfterHeader(d time.Duration) string {
	return strconv.FormatInt(int64(d/time.Second), 10)
}
