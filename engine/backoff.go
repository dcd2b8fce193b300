package engine

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// 429 back-offs. Providers limit per method (eth_getLogs and trace calls
// have their own, lower, limits), so a 429 backs off the (endpoint, method)
// pair: that method goes elsewhere while the endpoint keeps serving the
// others, as it would for a client talking to it directly. The back-off
// widens to the whole endpoint when 429s hit two distinct methods of it
// within one back-off span (its limit is not one method's), or when a probe
// gets one. Every client attempt upstream carries one method, so every
// client 429 is attributable: a 429 to an upstream batch of a client's
// reads (batchforward.go) backs off the whole endpoint, and its calls
// then run one by one, each 429 of theirs of one method.
// A Retry-After is honoured up to breaker.backoff_max, never past it: an
// endpoint asking for a day would otherwise be gone for a day.

// asksBackOff says whether an upstream's HTTP status asks its client to
// back off: 429, or 503 with a Retry-After (RFC 9110: how long the service
// expects to be unavailable). Taken for the endpoint's failure, a 503 with
// a Retry-After was failed over to every other endpoint at once and
// charged to breakers: a pool answering so got three upstream requests per
// client request, where it had asked for fewer.
func asksBackOff(status int, retryAfter string) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable && retryAfter != ""
}

// backoffState is a running back-off: of the whole endpoint (endpoint.mu)
// or of one pair (methodStats, under its endpoint's mu).
type backoffState struct {
	until  time.Time
	streak int // consecutive 429s, for the exponential back-off
	// method is the method whose 429 set a pair's back-off: methods past
	// maxTrackedMethods share one entry, and are still distinct methods.
	method string
}

// backoff is what one 429 did.
type backoff struct {
	// running: the back-off it reports (the whole endpoint's, or the
	// pair's) was running already: the 429 answered an attempt sent before
	// it began (one of a burst in flight), panic routing's or a probe's. It
	// is the same limit, not news: no event, no longer back-off.
	running bool
	d       time.Duration // the back-off started
	asked   time.Duration // the Retry-After, when it asked for more than breaker.backoff_max
	// whole: the endpoint backs off, for wholeD (also is the other method
	// backing off, "" after a probe's 429).
	whole  bool
	wholeD time.Duration
	also   string
}

// hit applies one 429 to the back-off: its Retry-After capped at max, else
// base·2^streak capped at max, extends until (never shortens it) and counts
// the streak. asked is the Retry-After when it was capped. A 429 while the
// back-off runs (running) only honours a longer Retry-After: a burst of
// attempts in flight when the limit hit is one 429, not a streak that
// doubles the back-off at each of them.
func (s *backoffState) hit(now time.Time, retryAfter, base, max time.Duration) (d, asked time.Duration, running bool) {
	running = now.Before(s.until)
	if running && retryAfter <= 0 {
		return s.until.Sub(now), 0, true
	}
	switch {
	case retryAfter > 0 && retryAfter > max:
		d, asked = max, retryAfter
	case retryAfter > 0:
		d = retryAfter
	default:
		d = base << min(s.streak, 20)
		if d > max || d <= 0 {
			d = max
		}
	}
	if !running {
		s.streak++
	}
	if until := now.Add(d); until.After(s.until) {
		s.until = until
	}
	return d, asked, running
}

// backOffWhole starts (or extends) a back-off of the whole endpoint.
func (ep *endpoint) backOffWhole(now time.Time, retryAfter, base, max time.Duration) backoff {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	d, asked, running := ep.backoff.hit(now, retryAfter, base, max)
	return backoff{running: running, d: d, asked: asked, whole: true, wholeD: d}
}

// backOffMethod backs off the pair (ep, method) after a client attempt's
// 429, and the whole endpoint when another method of it is backing off too.
func (ep *endpoint) backOffMethod(now time.Time, ms *methodStats, method string, retryAfter, base, max time.Duration) backoff {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	also := ""
	if now.Before(ms.backoff.until) && ms.backoff.method != method {
		also = ms.backoff.method
	}
	for _, st := range ep.methods.all() {
		if also != "" {
			break
		}
		if st != ms && now.Before(st.backoff.until) {
			also = st.backoff.method
		}
	}
	d, asked, running := ms.backoff.hit(now, retryAfter, base, max)
	ms.backoff.method = method
	if n := ms.backoff.until.UnixNano(); n > ep.methodOffUntil.Load() {
		ep.methodOffUntil.Store(n)
	}
	b := backoff{running: running, d: d, asked: asked, also: also}
	if also != "" {
		b.whole = true
		b.wholeD, _, b.running = ep.backoff.hit(now, retryAfter, base, max)
	}
	return b
}

// backedOff says whether a back-off of the whole endpoint is running.
func (ep *endpoint) backedOff(now time.Time) (bool, time.Time) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return now.Before(ep.backoff.until), ep.backoff.until
}

// methodBackedOff says whether the pair (ep, method) is backing off. Without
// any pair back-off running it reads one atomic, not the method's entry.
func (ep *endpoint) methodBackedOff(method string, now time.Time) (bool, time.Time) {
	if now.UnixNano() >= ep.methodOffUntil.Load() {
		return false, time.Time{}
	}
	ms := ep.stats(method)
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return now.Before(ms.backoff.until), ms.backoff.until
}

// backoffEnd is when ep may take method again after its 429s: the later
// end of the whole endpoint's back-off and the pair's, zero if neither runs.
func (ep *endpoint) backoffEnd(method string, now time.Time) time.Time {
	var end time.Time
	if off, until := ep.backedOff(now); off {
		end = until
	}
	if off, until := ep.methodBackedOff(method, now); off && until.After(end) {
		end = until
	}
	return end
}

// pairBackoff is the end of the pair's running back-off, zero if none.
func (ep *endpoint) pairBackoff(ms *methodStats, now time.Time) time.Time {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if now.Before(ms.backoff.until) {
		return ms.backoff.until
	}
	return time.Time{}
}

// liftBackoffs ends every 429 back-off of ep, the whole endpoint's and its
// methods', and says whether one was running.
func (ep *endpoint) liftBackoffs(now time.Time) bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	running := now.Before(ep.backoff.until)
	ep.backoff = backoffState{}
	for _, st := range ep.methods.all() {
		running = running || now.Before(st.backoff.until)
		st.backoff = backoffState{}
	}
	ep.methodOffUntil.Store(0)
	return running
}

// backOffSucceeded resets the exponential streaks (the endpoint's and the
// answered method's) after a good answer.
func (ep *endpoint) backOffSucceeded(ms *methodStats) {
	ep.mu.Lock()
	ep.backoff.streak = 0
	ms.backoff.streak = 0
	ep.mu.Unlock()
}

// message is the backoff event's text.
// method is "" for a probe's 429.
func (b backoff) message(method string) string {
	var sb strings.Builder
	sb.WriteString("HTTP 429")
	if method == "" {
		sb.WriteString(" to a probe")
	} else {
		sb.WriteString(" on " + method)
	}
	sep := ": "
	if b.asked > 0 {
		fmt.Fprintf(&sb, ": Retry-After %.0fs capped at %s", b.asked.Seconds(), shortDuration(b.d))
		sep = "; "
	}
	switch {
	case !b.whole:
		fmt.Fprintf(&sb, "%sbacking off %s for %s (other methods still routed)", sep, method, shortDuration(b.d))
	case b.also != "":
		fmt.Fprintf(&sb, "%s%s backing off too: backing off the whole endpoint for %s", sep, b.also, shortDuration(b.wholeD))
	default:
		fmt.Fprintf(&sb, "%sbacking off the whole endpoint for %s", sep, shortDuration(b.wholeD))
	}
	return sb.String()
}

// shortDuration writes 1m, not 1m0s.
func shortDuration(d time.Duration) string {
	s := d.Round(time.Millisecond).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
