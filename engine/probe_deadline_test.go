package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A probe is judged by the same rule as the client attempts it stands for.
// With nothing learned, no answer within probes.timeout is a hang, charged
// then, but the probe listens on as long as a client attempt would run (a
// third of the 3 s request timeout): an answer after probes.timeout is a
// late answer, which ends the run of failures. Once the endpoint's deadline
// is learned and longer than probes.timeout, that is the probe's deadline.
func TestProbe_SlowAnswerIsLateNotAFailure(t *testing.T) {
	t.Parallel()
	// A cold probe's answer that came while rpcdash measured itself stalled
	// (a 50 ms scheduling lag excuses the 100 ms probes.timeout) is rightly
	// not learned, and five answers then teach no deadline: that run
	// concludes nothing (1 run in 3 of the engine suite beside two CPU hogs).
	// Nor is a probe cold once the engine measured one of the 300 ms
	// answers past a third of the 1 s cold deadline (a loaded machine's
	// 342 ms): 3 × that is the method's deadline from its few answers
	// (source few), longer than the cold one, as it should be.
	untilJudged(t, func(int) string {
		h, learnt, notCold := slowAnswerIsLateNotAFailure(t)
		if learnt {
			return ""
		}
		if notCold != "" {
			return notCold + " on this loaded machine: the probes were not cold"
		}
		if !stalled(h) {
			t.Fatalf("no deadline learnt from five cold probes' answers, and no stall of rpcdash's own excused one (events %+v)", h.events())
		}
		return "rpcdash measured itself stalled on this loaded machine and rightly learnt nothing from an answer"
	})
}

// slowAnswerIsLateNotAFailure runs the scenario; false: no deadline was
// learnt from the cold probes, or (notCold says how) the answers gave the
// probes a deadline before five were in, and nothing more was asserted.
func slowAnswerIsLateNotAFailure(t *testing.T) (h *harness, learnt bool, notCold string) {
	const probeTimeout, coldWait = 100 * time.Millisecond, time.Second
	const answer = 3 * probeTimeout
	h = newHarness(t, func(c *engine.Config) {
		c.Probes.Timeout = probeTimeout
		c.Server.RequestTimeout = 3 * coldWait
	}, sim.Config{Latency: fixed(answer)}, sim.Config{})
	probe := func(name string) engine.ProbeResult {
		t.Helper()
		res, err := h.eng.Probe(ctxT(t, 10*time.Second), name, "eth_blockNumber", nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	for i := range 5 { // cold: each is charged at probes.timeout, then answers
		if m := h.endpoint("s0").Methods["eth_blockNumber"]; i > 0 && m.AttemptTimeoutSource == "few" {
			return h, false, fmt.Sprintf("after %d answers of %s the deadline is %s (few)", i, answer, m.AttemptTimeout.Round(time.Millisecond))
		}
		if res := probe("s0"); !res.OK || res.Deadline != probeTimeout {
			t.Fatalf("cold probe %d of an endpoint answering in %s: ok=%v rtt=%s deadline=%s %s", i, answer, res.OK, res.RTT, res.Deadline, res.Err)
		}
		ep := h.endpoint("s0")
		if m := ep.Methods["eth_blockNumber"]; ep.Breaker.ConsecutiveFailures != 0 || ep.Rates.Failures != 0 || m.LateAnswers != int64(i+1) {
			t.Fatalf("after cold probe %d answering in %s (probes.timeout %s): %d failures in a row, %d failures, %d late answers; want 0, 0, %d",
				i, answer, probeTimeout, ep.Breaker.ConsecutiveFailures, ep.Rates.Failures, m.LateAnswers, i+1)
		}
	}
	learned := probe("s0") // five answers: the deadline is 3 × their p99
	if learned.Deadline == probeTimeout && stalled(h) {
		return h, false, ""
	}
	if m := h.endpoint("s0").Methods["eth_blockNumber"]; !learned.OK || learned.Deadline < 2*answer || m.Overdue != 5 {
		t.Fatalf("probe with a learned deadline: ok=%v deadline=%s overdue=%d; want an answer within about 3 × %s, not overdue",
			learned.OK, learned.Deadline, m.Overdue, answer)
	}

	h.sims[1].SetMode(sim.ModeHang)
	hung := probe("s1")
	if hung.OK || hung.RTT < coldWait || hung.RTT > coldWait+time.Second {
		t.Fatalf("probe of a hung endpoint: ok=%v rtt=%s; want a failure after listening %s", hung.OK, hung.RTT, coldWait)
	}
	if ep := h.endpoint("s1"); ep.Breaker.ConsecutiveFailures != 1 || ep.Rates.Failures != 1 {
		t.Fatalf("a hung probe not charged once: %+v %+v", ep.Breaker, ep.Rates)
	}
	t.Logf("probes.timeout %s: 5 cold probes answered in %s, late, 0 failures; then deadline %s learned; a hang charged at %s, given up after %s",
		probeTimeout, answer, learned.Deadline.Round(time.Millisecond), hung.Deadline, hung.RTT.Round(time.Millisecond))
	return h, true, ""
}

// An endpoint whose answers leave their record for good (10 ms reads now
// taking 600 ms) is cut by its breaker, not learnt: each probe passes the
// deadline the endpoint's own answers set, its late answer does not end the
// run of failures, and it waits out of the window, so the deadline does not
// jump to the new pace before the breaker has had its say. Before, the
// first late answer ended the run and its 600 ms became the window's p99
// (deadline 1.8 s): nothing after was charged and the endpoint stayed in.
func TestProbe_AnEndpointSlowForGoodIsCutNotLearnt(t *testing.T) {
	t.Parallel()
	const slow = 600 * time.Millisecond
	var h *harness
	probe := func(answered bool) engine.ProbeResult {
		t.Helper()
		res, err := h.eng.Probe(ctxT(t, 10*time.Second), "s0", "eth_blockNumber", nil)
		if err != nil || res.OK != answered {
			t.Fatalf("probe: %+v %v; want answered %v", res, err, answered)
		}
		return res
	}
	// The deadline is learnt from the answers' tail (the slowest of 30): a
	// loaded machine's stall on one answer taught 639 ms beside two busy
	// loops, and a slow answer no later than that tests nothing. The
	// scenario runs again then, at most three times.
	var learned engine.MethodSnapshot
	untilJudged(t, func(int) string {
		h = newHarness(t, func(c *engine.Config) {
			c.Probes.Timeout = 100 * time.Millisecond
			c.Breaker.Cooldown = time.Minute // probes after the open only observe
		}, sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(10 * time.Millisecond)})
		for range 30 {
			probe(true)
		}
		learned = h.endpoint("s0").Methods["eth_blockNumber"]
		if learned.AttemptTimeoutSource == "cold" {
			t.Fatalf("after 30 answers of 10 ms: deadline %s (cold), want one learned", learned.AttemptTimeout)
		}
		if learned.AttemptTimeout < slow {
			return ""
		}
		return fmt.Sprintf("30 answers of 10 ms taught a deadline of %s on this loaded machine, not below %s", learned.AttemptTimeout, slow)
	})

	h.sims[0].SetExtraLatency(slow)
	for i := 1; i <= 2; i++ {
		res := probe(true)
		ep := h.endpoint("s0")
		m := ep.Methods["eth_blockNumber"]
		if res.RTT < slow || ep.Breaker.State != engine.BreakerClosed || ep.Breaker.ConsecutiveFailures != i {
			t.Fatalf("slow probe %d answered in %s: breaker %s, %d failures in a row; want closed, %d", i, res.RTT, ep.Breaker.State, ep.Breaker.ConsecutiveFailures, i)
		}
		if m.AttemptTimeout != learned.AttemptTimeout || m.LateAnswers != int64(i) {
			t.Fatalf("slow probe %d: deadline %s (was %s), %d late answers: the run's late answers taught the deadline", i, m.AttemptTimeout, learned.AttemptTimeout, m.LateAnswers)
		}
		// Out of the deadline's window, not off the screen: the Snapshot's
		// latency counts the held answers in.
		if m.Latency.Max < slow || m.Latency.Count != learned.Latency.Count+int64(i) || ep.Latency.Max < slow {
			t.Fatalf("slow probe %d: the Snapshot shows max %s over %d answers (endpoint max %s); want the %d held answers of %s among %d",
				i, m.Latency.Max, m.Latency.Count, ep.Latency.Max, i, slow, learned.Latency.Count+int64(i))
		}
		// Held out of the window, not out of the router's sight: two slow
		// answers in a row are the median of its last three.
		if i == 2 && (ep.Score.Latency < slow || m.Score.Latency < slow) {
			t.Fatalf("slow probe %d: the router's latency figure is %s (endpoint), %s (method); want at least the held %s", i, ep.Score.Latency, m.Score.Latency, slow)
		}
	}
	cut := probe(false) // the third charge opens the breaker, and ends the probe
	if ep := h.endpoint("s0"); ep.Breaker.State != engine.BreakerOpen {
		t.Fatalf("third slow probe (rtt %s): breaker %s with %d failures in a row; want open", cut.RTT, ep.Breaker.State, ep.Breaker.ConsecutiveFailures)
	}
	// While it is out, its slow answers wait too (a probe observing the
	// cooldown): its next trial is judged by the pace that cut it.
	during := probe(true) // the third probe was given up: two held answers, and this one
	if m := h.endpoint("s0").Methods["eth_blockNumber"]; m.AttemptTimeout != learned.AttemptTimeout || m.Latency.Count != learned.Latency.Count+3 || h.eng.HeldAnswers("s0") != 3 {
		t.Fatalf("breaker open, a probe answered in %s: deadline %s (was %s), %d answers shown; want the answer held, and shown (%d)",
			during.RTT, m.AttemptTimeout, learned.AttemptTimeout, m.Latency.Count, learned.Latency.Count+3)
	}
	// Once it answers in time again, the held answers go in with that answer.
	h.sims[0].SetExtraLatency(0)
	after := probe(true)
	m := h.endpoint("s0").Methods["eth_blockNumber"]
	if m.Latency.Max < slow || m.AttemptTimeout <= learned.AttemptTimeout || h.eng.HeldAnswers("s0") != 0 {
		t.Fatalf("recovered, an answer in %s: window max %s, deadline %s; want the late answers in the window", after.RTT, m.Latency.Max, m.AttemptTimeout)
	}
	t.Logf("deadline %s learned from 10 ms answers; +%s: two late answers held, the third probe opened the breaker, a slow answer while open held; recovered: the window max %s, deadline %s",
		learned.AttemptTimeout, slow, m.Latency.Max, m.AttemptTimeout.Round(time.Millisecond))
}
