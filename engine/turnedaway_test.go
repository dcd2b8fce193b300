package engine_test

import (
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// openThenCool opens name's breaker with one failed read (breaker.failures
// 1) and moves the clock past its cooldown: half-open, its trial free. A
// read half-way through, sent past the open breaker (the only endpoint,
// or panic routing), has it heard lately: an endpoint still answering.
func openThenCool(t *testing.T, h *harness, clock *testutil.Clock, u *sim.Upstream, name string) {
	t.Helper()
	u.SetMode(sim.ModeError)
	h.call(0, "eth_getBalance", addr, "latest")
	u.SetMode(sim.ModeNormal)
	if st := h.endpoint(name).Breaker.State; st != engine.BreakerOpen {
		t.Fatalf("%s's breaker %s after its failure; want open", name, st)
	}
	half := h.eng.Config().Breaker.Cooldown / 2
	clock.Advance(half)
	if rep := h.call(0, "eth_getBalance", addr, "latest"); rep.endpoint != name {
		t.Fatalf("read past %s's open breaker answered by %q", name, rep.endpoint)
	}
	clock.Advance(half + time.Millisecond)
}

// takeTrialOnce has the next request's ranking followed by another
// request taking name's half-open trial; the trial is let go with the test.
func takeTrialOnce(t *testing.T, h *harness, name string) {
	var once sync.Once
	var granted bool
	release := func() {}
	h.eng.OnRanked(func() {
		once.Do(func() { granted, release = h.eng.TakeTrial(name) })
	})
	t.Cleanup(func() {
		h.eng.OnRanked(nil)
		release()
		if !granted {
			t.Errorf("%s's trial was not free to take: the case did not happen", name)
		}
	})
}

// A read ranked while its only endpoint is half-open, whose trial another
// request takes before the read's attempt, is still sent there (past the
// breaker, with no verdict), as a direct client's would be. Before: it was
// answered "no routable endpoint: every candidate refused the attempt".
func TestTurnedAway_TheOnlyEndpointsTrialTakenMeanwhileStillAnswers(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, func(c *engine.Config) {
		c.Breaker.Failures, c.Breaker.MaxOpenShare = 1, 1
	}, sim.Config{Latency: fixed(time.Millisecond)})
	openThenCool(t, h, clock, h.sims[0], "s0")
	takeTrialOnce(t, h, "s0")
	rep := h.call(1, "eth_getBalance", addr, "latest")
	mustOK(t, rep)
	if rep.endpoint != "s0" || rep.attempts != 1 {
		t.Fatalf("answered by %q after %d attempts; want s0, once", rep.endpoint, rep.attempts)
	}
	if st := h.endpoint("s0").Breaker.State; st != engine.BreakerHalfOpen {
		t.Errorf("s0's breaker %s: a read sent past it gives no verdict, the trial in flight does", st)
	}
}

// A read of the tip ranked while the current endpoint is half-open, whose
// trial another request takes before the read's attempt, goes there past
// the breaker, not to an endpoint lagging the chain's head, whose old block
// would be relayed as current. Before: the lagging endpoint answered it
// (TestLag_ASlowCurrentEndpointKeepsTheTipReads failed so, now and then).
func TestTurnedAway_ATipReadGoesPastTheBreakerRatherThanToALaggingEndpoint(t *testing.T) {
	t.Parallel()
	r := newHeadRig(t, 2, func(c *engine.Config) {
		c.Breaker.Failures, c.Breaker.MaxOpenShare = 1, 1
	})
	r.s1Lagging()
	openThenCool(t, r.harness, r.clock, r.sims[0], "s0")
	r.probeAll()
	takeTrialOnce(t, r.harness, "s0")
	rep := r.call(1, "eth_getBalance", addr, "latest")
	mustOK(t, rep)
	if rep.endpoint != "s0" {
		t.Fatalf("answered by %q after %d attempts, s1 lagging %d blocks; want the current s0", rep.endpoint, rep.attempts, r.endpoint("s1").Lag)
	}
}
