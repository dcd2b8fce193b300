package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A probe of an endpoint whose breaker is open only observes, listening
// for a late answer; it must not hold the endpoint's probe loop past the
// cooldown's end, where the trial (the next probe) is due. It listened a
// third of the request timeout whatever the cooldown: a hung endpoint with
// a 2 s cooldown, cleared at once, had its trial 1 s after next_trial_at
// (the drill, 1 s cooldown: 2.3 s late), so it stayed out longer than its
// breaker said.

const (
	cooldownProbeTimeout = 50 * time.Millisecond
	cooldownOfTest       = 300 * time.Millisecond
	cooldownListen       = 3 * time.Second // a third of the request timeout
)

func cooldownHarness(t *testing.T, failures int) (*harness, func() engine.ProbeResult) {
	h := newHarness(t, func(c *engine.Config) {
		c.Probes.Timeout = cooldownProbeTimeout
		c.Breaker.Cooldown = cooldownOfTest
		c.Breaker.Failures = failures
		c.Server.RequestTimeout = 3 * cooldownListen
	}, sim.Config{}, sim.Config{})
	h.sims[0].SetMode(sim.ModeHang)
	return h, func() engine.ProbeResult {
		res, err := h.eng.Probe(ctxT(t, 10*time.Second), "s0", "eth_blockNumber", nil)
		if err != nil {
			t.Error(err)
		}
		return res
	}
}

// checkGivenUpForTrial: the probe ended when the trial was due, not after
// listening its whole time, and counted as the hang it was, once.
func checkGivenUpForTrial(t *testing.T, h *harness, res engine.ProbeResult, failures int64) {
	t.Helper()
	if res.OK || res.RTT >= cooldownListen {
		t.Fatalf("a probe of the hung endpoint while its breaker was open (cooldown %s): ok=%v, listened %s; want it given up when the trial is due, not after %s",
			cooldownOfTest, res.OK, res.RTT.Round(time.Millisecond), cooldownListen)
	}
	if !h.eng.NeedsTrial("s0") {
		t.Fatalf("the probe ended %s after it began, before the trial was due", res.RTT.Round(time.Millisecond))
	}
	if ep := h.endpoint("s0"); ep.Rates.Failures != failures || ep.Breaker.State != engine.BreakerOpen {
		t.Fatalf("after the probe given up: %d failures, breaker %s; want %d, still open for its trial", ep.Rates.Failures, ep.Breaker.State, failures)
	}
}

func TestProbe_AProbeDuringTheCooldownEndsWhenTheTrialIsDue(t *testing.T) {
	t.Parallel()
	h, probe := cooldownHarness(t, 1)
	probe() // charged at probes.timeout, which opens the breaker and ends it
	ep := h.endpoint("s0")
	if ep.Breaker.State != engine.BreakerOpen {
		t.Fatalf("after a hung probe: breaker %s, want open", ep.Breaker.State)
	}
	observing := probe() // no verdict: it only observes
	checkGivenUpForTrial(t, h, observing, ep.Rates.Failures+1)
	t.Logf("cooldown %s: a probe during it gave up after %s, the trial due; it used to listen %s", cooldownOfTest, observing.RTT.Round(time.Millisecond), cooldownListen)
}

// The breaker opens while a probe, charged at its deadline, listens on.
func TestProbe_AProbeListeningWhenTheBreakerOpensEndsWhenTheTrialIsDue(t *testing.T) {
	t.Parallel()
	h, probe := cooldownHarness(t, 2)
	listening := make(chan engine.ProbeResult, 1)
	go func() { listening <- probe() }()
	for h.endpoint("s0").Breaker.ConsecutiveFailures < 1 { // charged, listening on
		time.Sleep(5 * time.Millisecond)
	}
	probe() // the second charge opens the breaker
	ep := h.endpoint("s0")
	if ep.Breaker.State != engine.BreakerOpen {
		t.Fatalf("after two hung probes: breaker %s, want open", ep.Breaker.State)
	}
	res := <-listening
	checkGivenUpForTrial(t, h, res, ep.Rates.Failures+1)
	t.Logf("cooldown %s: the probe listening when the breaker opened gave up after %s, the trial due; it used to listen %s", cooldownOfTest, res.RTT.Round(time.Millisecond), cooldownListen)
}
