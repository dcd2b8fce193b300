package engine

import (
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A read whose attempt failed (an HTTP 500, a broken connection: not a
// 429) with nothing else to ask now but an endpoint backing off after a
// 429 of its own is not ended with that failure at once: the endpoint
// backing off is held out (waitsBackOff), and with no attempt running
// nothing woke the read at its back-off's end. With steady drained, tail
// answering 1 % of its requests 429 (a back-off of 1 s, widened to the
// whole endpoint) and flaky its own 5 % of 500s, 0.2 % of reads failed
// with flaky's 500 at once, unasked elsewhere, where a client of tail, or
// one asking flaky again, had its answer.

// askAgainBesideBackOff asks the endpoint that failed again at once
// (retryFailed), once a request, when the read met no 429 and a candidate
// not asked yet is held out by its back-off: a 500 is often gone on the
// next ask, as a client of that endpoint asking again finds.
func (x *execution) askAgainBesideBackOff() bool {
	if x.p.class != jsonrpc.ClassRead || x.rateLimited > 0 || x.fallback != nil || x.atOnce || !x.backOffLeft() {
		return false
	}
	started, _ := x.retryFailed()
	x.atOnce = started
	return started
}

// backOffWait is how long until the soonest back-off that holds out a
// candidate not asked yet ends, once a request, when the read met no 429
// (a read answered 429 keeps failRateLimited's answer, and a pool limited
// everywhere one upstream request per call), that back-off ends within
// breaker.backoff_base (a short one: a Retry-After of seconds is a
// provider's to honour, and a client of the failing endpoint had its
// error at once) and the request has at least as long again left for
// the ask; false otherwise.
func (x *execution) backOffWait() (time.Duration, bool) {
	if x.p.class != jsonrpc.ClassRead || x.rateLimited > 0 || x.fallback != nil || x.waitedBackOff {
		return 0, false
	}
	now := x.e.now()
	var due time.Time
	for i, c := range x.order {
		if x.used[i] || !x.waitsBackOff(c) {
			continue
		}
		if end := c.ep.backoffEnd(x.p.method, now); !end.IsZero() && (due.IsZero() || end.Before(due)) {
			due = end
		}
	}
	if due.IsZero() {
		return 0, false
	}
	wait := max(due.Sub(now), 0)
	if wait > x.e.cfg.Breaker.BackoffBase {
		return 0, false
	}
	if dl, ok := x.ctx.Deadline(); ok && time.Until(dl) < 2*wait+retryPause {
		return 0, false
	}
	x.waitedBackOff = true
	return wait + time.Millisecond, true // past the end, not at it
}
