package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// A hung endpoint charged once at its deadline is suspect and ranked
// behind the others, and no further charge came until an exploration
// router.explore_after later: its breaker stayed closed 5 s beside a hang
// (a CI run of TestHang_EndpointThatNeverAnswersIsOutWithinTwoSeconds).
// Now each charge short of breaker.failures makes it due for exploration at
// once: a hedge sent beside the best candidate, which runs on to its
// deadline and is charged again, so the breaker opens within
// breaker.failures deadlines, and no client waits on it.
func TestExplore_AChargedEndpointIsExploredAtOnceUntilItsBreakerDecides(t *testing.T) {
	t.Parallel()
	// Alike enough that one timeout ranks s0 behind the others.
	h, deadline, hungAt := hungAfterWarmUp(t, func(c *engine.Config) {
		// Past the deadline: no read is hedged before its primary's
		// deadline, so each deadline a hung primary passes is charged.
		c.Hedge.Delay = "1s"
	}, 18*time.Millisecond, 20*time.Millisecond)

	// Reads one after another until s0's breaker opens, for at most two
	// seconds: far less than router.explore_after (5 s).
	var opened engine.Event
	waited := 0
	for i := 0; opened.Time.IsZero() && time.Since(hungAt) < 2*time.Second; i++ {
		r := h.call(1000+i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.took >= deadline {
			waited++
		}
		for _, ev := range breakerStates(h, "s0") {
			if ev.To == "open" {
				opened = ev
			}
		}
	}
	if opened.Time.IsZero() {
		s0 := h.endpoint("s0")
		t.Fatalf("s0 hung for 2 s with reads flowing: breaker %s, %d failures in a row, last error %q; events: %s",
			s0.Breaker.State, s0.Breaker.ConsecutiveFailures, s0.LastError, eventsSince(h, hungAt))
	}
	// The read that met the hang as its primary waited its deadline; the
	// others were answered beside the exploring hedges.
	if waited > 1 {
		for _, tr := range h.traces("limit=40").Requests {
			if tr.LatencyMS >= ms(deadline) {
				t.Logf("read that waited: %s", describe(tr))
			}
		}
		t.Errorf("%d reads waited s0's deadline %s, want the one that met the hang first: exploring must cost the client nothing", waited, deadline)
	}
	t.Logf("s0 opened %s after the hang (deadline %s): %s; %d read(s) waited its deadline",
		opened.Time.Sub(hungAt).Round(time.Millisecond), deadline, opened.Message, waited)
}
