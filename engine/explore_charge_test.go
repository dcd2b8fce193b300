package engine_test

import (
	"strconv"
	"strings"
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
	// s0 takes reads only while the warm-up measured it an equal of the
	// others (18 ms against 20 ms): a loaded machine's stalls measured it
	// dearer now and then, and no read since the hang was ever sent to it.
	// Then the rule under test is not reached, and the engine's traces say
	// so.
	untilJudged(t, func(int) string {
		if chargedExploredAtOnce(t) {
			return ""
		}
		return "no read since the hang was sent to s0 (measured dearer than the others on this loaded machine)"
	})
}

// chargedExploredAtOnce runs the scenario once; false means no read since
// the hang had an attempt on s0, and nothing was asserted.
func chargedExploredAtOnce(t *testing.T) bool {
	t.Helper()
	// Alike enough that one timeout ranks s0 behind the others.
	h, deadline, hungAt := hungAfterWarmUp(t, func(c *engine.Config) {
		// Past the deadline: no read is hedged before its primary's
		// deadline, so each deadline a hung primary passes is charged.
		c.Hedge.Delay = "1s"
		// No exploration on the clock within the test: only a charge
		// makes s0 due for it.
		c.Router.ExploreAfter = time.Hour
	}, 18*time.Millisecond, 20*time.Millisecond)

	// Reads one after another until s0's breaker opens, for at most
	// breaker.failures deadlines, twice over, and 2 s (a loaded machine
	// learnt a deadline of 2 s from its stretched answers, and one of
	// 250 ms opened 2.3 s in): without a charge making it due,
	// exploration waits router.explore_after, an hour.
	failures := engine.Default().Breaker.Failures
	within := 2*time.Duration(failures)*deadline + 2*time.Second
	var opened engine.Event
	for i := 0; opened.Time.IsZero() && time.Since(hungAt) < within; i++ {
		mustOK(t, h.call(1000+i, "eth_getBalance", addr, "latest"))
		for _, ev := range breakerStates(h, "s0") {
			if ev.To == "open" {
				opened = ev
			}
		}
	}
	if opened.Time.IsZero() {
		s0 := h.endpoint("s0")
		reached := 0 // reads since the hang with an attempt on s0: none, and the rule under test was not reached
		for _, tr := range h.traces("limit=1000").Requests {
			for _, a := range tr.Attempts {
				if id, err := strconv.Atoi(tr.ID); err == nil && id >= 1000 && a.Endpoint == "s0" {
					reached++
					break
				}
			}
		}
		if reached == 0 && s0.Breaker.State == engine.BreakerClosed && s0.Breaker.ConsecutiveFailures == 0 {
			return false
		}
		t.Fatalf("s0 hung for %s (its deadline %s) with reads flowing, %d of them tried on s0: breaker %s, %d failures in a row, last error %q; events: %s",
			within, deadline, reached, s0.Breaker.State, s0.Breaker.ConsecutiveFailures, s0.LastError, eventsSince(h, hungAt))
	}
	// The read that met the hang as its primary waited its deadline; the
	// others were answered beside the exploring hedges: s0 was the first
	// attempt of one read at most (its attempts, not its time: a loaded
	// machine's stall can make any read take 250 ms).
	var waited []string
	for _, tr := range h.traces("limit=1000").Requests {
		if id, err := strconv.Atoi(tr.ID); err == nil && id >= 1000 && len(tr.Attempts) > 0 && tr.Attempts[0].Endpoint == "s0" {
			waited = append(waited, describe(tr))
		}
	}
	if len(waited) > 1 {
		t.Errorf("%d reads went first to s0 after its hang, want the one that met the hang: exploring must cost the client nothing: %s", len(waited), strings.Join(waited, " | "))
	}
	t.Logf("s0 opened %s after the hang (deadline %s): %s; %d read(s) went first to it",
		opened.Time.Sub(hungAt).Round(time.Millisecond), deadline, opened.Message, len(waited))
	return true
}
