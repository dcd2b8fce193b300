package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A half-open trial is held to the endpoint's usual pace, not to the
// probes' lenient probes.timeout nor to an attempt deadline the slow
// answers themselves raised: an endpoint still slowed (10 ms reads now
// taking 600 ms; three slow answers before it opened made its deadline
// 1.8 s) fails its trial at 250 ms and stays out. Before, the trial
// listened a third of the request timeout and its late answer closed the
// breaker of an endpoint whose every read was overdue. When the rest of
// the pool is as slow now, the trial is held to the deadline their pace
// gives and the endpoint is back.
func TestTrial_IsHeldToTheDeadlineOfTheReadsItStandsFor(t *testing.T) {
	const slow = 600 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Failures = 1
		c.Breaker.Successes = 1
		c.Breaker.Cooldown = 100 * time.Millisecond
	}, sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	h.eng.UseProbeTrials()
	probe := func(name string) engine.ProbeResult {
		t.Helper()
		res, err := h.eng.Probe(ctxT(t, 10*time.Second), name, "eth_blockNumber", nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for range 30 {
		probe("s0")
		probe("s1")
	}
	learned := h.endpoint("s0").Methods["eth_blockNumber"]
	if learned.AttemptTimeoutSource == "cold" || learned.AttemptTimeout >= slow {
		t.Fatalf("after 30 answers of 10 ms: deadline %s (%s), want one learned below %s", learned.AttemptTimeout, learned.AttemptTimeoutSource, slow)
	}

	// s0 turns slow; its answers (not charged: probes.timeout is 2 s)
	// raise its attempt deadline to the slow pace.
	h.sims[0].SetExtraLatency(slow)
	for range 3 {
		probe("s0")
	}
	raised := h.endpoint("s0").Methods["eth_blockNumber"].AttemptTimeout
	if raised < 2*slow {
		t.Fatalf("three answers of %s among 30 of 10 ms: deadline %s, want it raised past %s", slow, raised, 2*slow)
	}
	// Its breaker opens (an error), and it stays slow.
	if code, body := h.adminDo("POST", "/v1/endpoints/s0/fault", `{"mode":"error"}`); code != 200 {
		t.Fatalf("fault: %d %s", code, body)
	}
	if res := probe("s0"); res.OK {
		t.Fatalf("probe under an error fault answered: %+v", res)
	}
	if code, body := h.adminDo("DELETE", "/v1/endpoints/s0/fault", ""); code != 200 {
		t.Fatalf("clear: %d %s", code, body)
	}
	trial := func() (engine.ProbeResult, engine.EndpointSnapshot) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !h.eng.NeedsTrial("s0"); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("s0 waits for no trial 10 s after it opened: %+v", h.endpoint("s0").Breaker)
			}
		}
		res := probe("s0")
		return res, h.endpoint("s0")
	}

	res, ep := trial()
	if !res.OK || res.RTT < slow || res.Deadline != learned.AttemptTimeout || ep.Breaker.State != engine.BreakerOpen {
		t.Fatalf("trial answering in %s (attempt deadline %s, probes.timeout 2s): ok=%v, judged at %s, breaker %s; want it failed at the pace's %s and the breaker open",
			res.RTT.Round(time.Millisecond), raised, res.OK, res.Deadline, ep.Breaker.State, learned.AttemptTimeout)
	}
	if !strings.Contains(ep.LastError, "no answer within "+learned.AttemptTimeout.String()) {
		t.Fatalf("failed trial: last error %q, want it to name the deadline %s", ep.LastError, learned.AttemptTimeout)
	}

	// The pool slows down too: s1's last answers take 600 ms as well.
	h.sims[1].SetExtraLatency(slow)
	for range 3 {
		if r := probe("s1"); !r.OK {
			t.Fatalf("s1 probe: %+v", r)
		}
	}
	if s1 := h.endpoint("s1"); s1.Breaker.State != engine.BreakerClosed {
		t.Fatalf("s1 (slow, not charged by probes.timeout 2s): breaker %s", s1.Breaker.State)
	}
	res, ep = trial()
	if !res.OK || res.Deadline < 2*slow || ep.Breaker.State != engine.BreakerClosed {
		t.Fatalf("trial answering in %s while the rest of the pool answers in %s too: ok=%v, judged at %s, breaker %s; want it passed and closed",
			res.RTT.Round(time.Millisecond), slow, res.OK, res.Deadline, ep.Breaker.State)
	}
	t.Logf("deadline %s learned from 10 ms answers; +%s: deadline raised to %s, the trial failed at %s and the breaker stayed open; the pool as slow: trial judged at %s, closed",
		learned.AttemptTimeout, slow, raised.Round(time.Millisecond), learned.AttemptTimeout, res.Deadline.Round(time.Millisecond))
}

// Without probes the trials are client reads, held to the same pace: the
// read given to a slowed endpoint's trial races the next endpoint at its
// pace deadline (250 ms), not at the attempt deadline its slow answers
// raised (1.8 s); the client has the other endpoint's answer, and the
// breaker stays open. Before, the read waited the 600 ms answer, which
// closed the breaker.
func TestTrial_AClientReadTrialIsHeldToThePaceToo(t *testing.T) {
	const slow = 600 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Failures = 1
		c.Breaker.Successes = 1
		c.Breaker.Cooldown = 100 * time.Millisecond
		c.Hedge.Enabled = false
	}, sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	for i := range 40 {
		mustOK(t, h.call(i, "eth_blockNumber"))
	}
	for _, name := range []string{"s0", "s1"} {
		for range 10 {
			if _, err := h.eng.Probe(ctxT(t, 10*time.Second), name, "eth_blockNumber", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.sims[0].SetExtraLatency(slow)
	for range 3 {
		if _, err := h.eng.Probe(ctxT(t, 10*time.Second), "s0", "eth_blockNumber", nil); err != nil {
			t.Fatal(err)
		}
	}
	raised := h.endpoint("s0").Methods["eth_blockNumber"].AttemptTimeout
	if raised < 2*slow {
		t.Fatalf("three answers of %s: deadline %s, want it raised past %s", slow, raised, 2*slow)
	}
	if code, body := h.adminDo("POST", "/v1/endpoints/s0/fault", `{"mode":"error"}`); code != 200 {
		t.Fatalf("fault: %d %s", code, body)
	}
	if _, err := h.eng.Probe(ctxT(t, 10*time.Second), "s0", "eth_blockNumber", nil); err != nil {
		t.Fatal(err)
	}
	if code, body := h.adminDo("DELETE", "/v1/endpoints/s0/fault", ""); code != 200 {
		t.Fatalf("clear: %d %s", code, body)
	}
	if st := h.endpoint("s0").Breaker.State; st != engine.BreakerOpen {
		t.Fatalf("s0 after an error with breaker.failures 1: %s, want open", st)
	}
	for deadline := time.Now().Add(10 * time.Second); !h.eng.NeedsTrial("s0"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s0 waits for no trial 10 s after it opened: %+v", h.endpoint("s0").Breaker)
		}
	}
	r := h.call(100, "eth_blockNumber")
	mustOK(t, r)
	ep := h.endpoint("s0")
	if r.attempts != 2 || r.endpoint != "s1" || r.took >= slow || ep.Breaker.State != engine.BreakerOpen {
		t.Fatalf("the trial read: %d attempts, answered by %s in %s; s0's breaker %s (last error %q); want s0 tried, raced at its pace deadline, s1's answer, s0 open",
			r.attempts, r.endpoint, r.took.Round(time.Millisecond), ep.Breaker.State, ep.LastError)
	}
	t.Logf("attempt deadline raised to %s; the trial read was raced on s1 and answered in %s; s0 open (%s)", raised.Round(time.Millisecond), r.took.Round(time.Millisecond), ep.LastError)
}
