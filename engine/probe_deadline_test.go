package engine_test

import (
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
	const probeTimeout, coldWait = 100 * time.Millisecond, time.Second
	const answer = 3 * probeTimeout
	h := newHarness(t, func(c *engine.Config) {
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
}
