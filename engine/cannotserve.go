package engine

import "time"

// An endpoint that answered "cannot serve" to a method (outUnsupported:
// method not found, not supported, a range it does not take …) fails over
// at no cost to its breaker, but its latency figure says nothing of it: if
// it is the fastest it would be asked first on every call of the method,
// each paying its round trip before the endpoint that answers. The router
// remembers it per (endpoint, method) and ranks it after the endpoints that
// can serve the method, for breaker.cooldown: long enough that a method a
// node does not serve costs one extra round trip per cooldown (0.1/s at
// the default 10s), short enough that a node that enables it, or a limit
// met by one heavy request (a block range), is found out soon. Past it one
// call (a CAS on the mark) ranks it as usual again; a "cannot serve" marks
// it anew, an answer of the method clears it. It is still a candidate, so a
// request nothing else can take reaches it.

// markCannotServe notes that the endpoint could not serve the method of s
// at t. The entry the methods past the tracked cap share stands for no one
// method: it is not marked.
func (s *methodStats) markCannotServe(t time.Time) {
	if !s.shared {
		s.cannotServeAt.Store(t.UnixNano())
	}
}

// served clears the marks: the endpoint answered the method. (Read first:
// no write on the answer path while there is nothing to clear.)
func (s *methodStats) served() {
	if s.cannotServeAt.Load() != 0 {
		s.cannotServeAt.Store(0)
	}
	s.hang.clear()
}

// cannotServe says whether the router ranks the endpoint after the others
// for the method of s (nil: one it has no stats for) now. Past the interval
// the first caller claims a retry: it is told no, and the mark is renewed
// for everyone else.
func (s *methodStats) cannotServe(now time.Time, interval time.Duration) bool {
	if s == nil {
		return false
	}
	at := s.cannotServeAt.Load()
	if at == 0 {
		return false
	}
	if now.UnixNano()-at < int64(interval) {
		return true
	}
	return !s.cannotServeAt.CompareAndSwap(at, now.UnixNano())
}

// cannotServeUntil is when the mark on s ends, zero if none runs (the
// Snapshot).
func (s *methodStats) cannotServeUntil(now time.Time, interval time.Duration) time.Time {
	at := s.cannotServeAt.Load()
	if at == 0 {
		return time.Time{}
	}
	until := time.Unix(0, at).Add(interval)
	if !now.Before(until) {
		return time.Time{}
	}
	return until
}
