package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
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

// untilOpenedUnstalled runs a scenario whose hung probes must open s0's
// breaker, up to three times: a hang passed while rpcdash measured itself
// stalled (a busy machine: a 25 ms scheduling lag excused a 50 ms probe
// deadline, 1 run in 20 beside two CPU hogs) is rightly not charged, and
// the breaker stays closed; that run concludes nothing. open runs the
// probes and says whether the breaker opened.
func untilOpenedUnstalled(t *testing.T, failures int, open func(h *harness, probe func() engine.ProbeResult) bool) {
	t.Helper()
	untilJudged(t, func(int) string {
		h, probe := cooldownHarness(t, failures)
		if open(h, probe) {
			return ""
		}
		if !stalled(h) {
			t.Fatalf("after %d hung probes: breaker %s, want open (no stall of rpcdash's own excused them; events %+v)", failures, h.endpoint("s0").Breaker.State, h.events())
		}
		return "rpcdash measured itself stalled on this loaded machine and rightly charged no hung probe"
	})
}

func TestProbe_AProbeDuringTheCooldownEndsWhenTheTrialIsDue(t *testing.T) {
	t.Parallel()
	untilOpenedUnstalled(t, 1, func(h *harness, probe func() engine.ProbeResult) bool {
		probe() // charged at probes.timeout, which opens the breaker and ends it
		ep := h.endpoint("s0")
		if ep.Breaker.State != engine.BreakerOpen {
			return false
		}
		observing := probe() // no verdict: it only observes
		checkGivenUpForTrial(t, h, observing, ep.Rates.Failures+1)
		t.Logf("cooldown %s: a probe during it gave up after %s, the trial due; it used to listen %s", cooldownOfTest, observing.RTT.Round(time.Millisecond), cooldownListen)
		return true
	})
}

// The breaker opens while a probe, charged at its deadline, listens on.
func TestProbe_AProbeListeningWhenTheBreakerOpensEndsWhenTheTrialIsDue(t *testing.T) {
	t.Parallel()
	untilOpenedUnstalled(t, 2, func(h *harness, probe func() engine.ProbeResult) bool {
		listening := make(chan engine.ProbeResult, 1)
		go func() { listening <- probe() }()
		// Charged, listening on; or, rpcdash stalled, excused: then the
		// probe listens its whole time (cooldownListen) uncharged.
		charged := testutil.Poll(cooldownListen, func() bool { return h.endpoint("s0").Breaker.ConsecutiveFailures >= 1 })
		if !charged {
			<-listening
			return false
		}
		probe() // the second charge opens the breaker
		ep := h.endpoint("s0")
		if ep.Breaker.State != engine.BreakerOpen {
			<-listening
			return false
		}
		res := <-listening
		checkGivenUpForTrial(t, h, res, ep.Rates.Failures+1)
		t.Logf("cooldown %s: the probe listening when the breaker opened gave up after %s, the trial due; it used to listen %s", cooldownOfTest, res.RTT.Round(time.Millisecond), cooldownListen)
		return true
	})
}
