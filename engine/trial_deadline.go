package engine

import "time"

// A half-open trial stands for the client reads its endpoint would take
// back, and is held to the endpoint's usual pace, not to probes.timeout or
// to its attempt deadline: by the time a slowed endpoint's breaker opens,
// the answers that showed the slowness (hedged attempts kept running as
// tail samples, late answers) have already raised that deadline, a tail
// measure (three times the p99), to the slow pace, and a trial judged by it
// readmitted a 40 ms endpoint under a 500 ms fault at every cooldown
// ("closed", then open again a second later). The usual pace is the body
// of its answers (the router's figure without its last answers), which a
// few slow ones do not move; a slowness that lasts until it is the body is
// the endpoint's pace by then. An endpoint no slower than the rest of the
// pool is no reason to keep out: when the other routable endpoints are slow
// now too (a pool-wide slowdown), the deadline their recent pace gives
// holds instead, if longer.

// paceDeadline is the deadline an endpoint's usual pace for the method
// gives (breaker.attempt_timeout_factor times it, clamped as attempt
// deadlines are); false before enough answers.
func (e *Engine) paceDeadline(ep *endpoint, s *methodStats) (time.Duration, bool) {
	usual, _, _, ok := ep.usualLatency(s)
	if !ok {
		return 0, false
	}
	d, _ := e.deadlineAt(usual, e.methodLimit(s))
	return d, true
}

// trialHang is when a half-open trial (a probe) that has not answered has
// failed: the larger of the endpoint's pace deadline and the one the
// fastest other routable endpoint's recent pace gives. ok is false before
// the endpoint has a pace, or when no other endpoint can take its reads or
// has a pace to go by: the pool needs it back whatever its pace, and the
// trial waits its whole listening time.
func (e *Engine) trialHang(ep *endpoint, s *methodStats, now time.Time) (time.Duration, bool) {
	own, ok := e.paceDeadline(ep, s)
	if !ok {
		return 0, false
	}
	best, found := 0.0, false
	for _, other := range e.endpoints {
		if other == ep || !e.routable(other, now) {
			continue
		}
		ms, _ := other.methods.lookup(s.method)
		if lat, _, ok := other.routeLatencyOf(ms); ok && (!found || lat < best) {
			best, found = lat, true
		}
	}
	if !found {
		return 0, false
	}
	pool, _ := e.deadlineAt(time.Duration(best*float64(time.Millisecond)), e.methodLimit(s))
	return max(own, pool), true
}
