package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A half-open trial is judged by the endpoint's usual pace, not by the
// probe's lenient listening time nor by an attempt deadline the slow
// answers themselves raised: an endpoint still slowed (10 ms reads now
// taking 600 ms; three slow answers before it opened made its deadline
// 1.8 s) fails its trial, answered in 600 ms, and stays out. Before, the
// answer passed the trial and closed the breaker of an endpoint whose
// every read was overdue. When the rest of the pool is as slow now, the
// deadline their pace gives holds and the endpoint is back.
func TestTrial_IsJudgedByTheEndpointsUsualPace(t *testing.T) {
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
	if !res.OK || res.RTT < slow || ep.Breaker.State != engine.BreakerOpen {
		t.Fatalf("trial answering in %s (attempt deadline %s, probes.timeout 2s): ok=%v, breaker %s; want it answered, failed for its pace (%s) and the breaker open",
			res.RTT.Round(time.Millisecond), raised, res.OK, ep.Breaker.State, learned.AttemptTimeout)
	}
	if want := "slower than its pace allows (" + learned.AttemptTimeout.String() + ")"; !strings.Contains(ep.LastError, want) {
		t.Fatalf("failed trial: last error %q, want %q", ep.LastError, want)
	}
	failed := ep.LastError

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
	if !res.OK || ep.Breaker.State != engine.BreakerClosed {
		t.Fatalf("trial answering in %s while the rest of the pool answers in %s too: ok=%v, breaker %s (%s); want it passed and closed",
			res.RTT.Round(time.Millisecond), slow, res.OK, ep.Breaker.State, ep.LastError)
	}
	t.Logf("deadline %s learned from 10 ms answers; +%s: deadline raised to %s; the trial failed (%s), open; the pool as slow: trial passed in %s, closed",
		learned.AttemptTimeout, slow, raised.Round(time.Millisecond), failed, res.RTT.Round(time.Millisecond))
}

// Without probes the trials are client reads, judged by the same pace: the
// slowed endpoint's answer to the read given to its trial (within the
// attempt deadline its slow answers raised to 1.8 s) fails the trial and
// the breaker stays open. Before, it closed the breaker.
func TestTrial_AClientReadTrialIsJudgedByThePaceToo(t *testing.T) {
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
	if r.endpoint != "s0" || r.took < slow || ep.Breaker.State != engine.BreakerOpen || !strings.Contains(ep.LastError, "slower than its pace allows") {
		t.Fatalf("the trial read: answered by %s in %s; s0's breaker %s (last error %q); want s0's slow answer to fail the trial, s0 open",
			r.endpoint, r.took.Round(time.Millisecond), ep.Breaker.State, ep.LastError)
	}
	t.Logf("attempt deadline raised to %s; the trial read answered by s0 in %s; s0 open (%s)", raised.Round(time.Millisecond), r.took.Round(time.Millisecond), ep.LastError)
}

// One slow answer is an endpoint with a heavy tail being itself, not a
// slowed one: a trial that lands in the tail, after answers at the usual
// pace, passes.
func TestTrial_OneTailAnswerPassesIt(t *testing.T) {
	const slow = 600 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Failures = 1
		c.Breaker.Successes = 1
		c.Breaker.Cooldown = 100 * time.Millisecond
	}, sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	h.eng.UseProbeTrials()
	for range 30 {
		for _, name := range []string{"s0", "s1"} {
			if _, err := h.eng.Probe(ctxT(t, 10*time.Second), name, "eth_blockNumber", nil); err != nil {
				t.Fatal(err)
			}
		}
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
	h.sims[0].SetExtraLatency(slow) // the trial lands in the tail
	for deadline := time.Now().Add(10 * time.Second); !h.eng.NeedsTrial("s0"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s0 waits for no trial 10 s after it opened: %+v", h.endpoint("s0").Breaker)
		}
	}
	res, err := h.eng.Probe(ctxT(t, 10*time.Second), "s0", "eth_blockNumber", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ep := h.endpoint("s0"); !res.OK || res.RTT < slow || ep.Breaker.State != engine.BreakerClosed {
		t.Fatalf("a trial answered in %s after answers of 10 ms: ok=%v, breaker %s (%s); want it passed, closed", res.RTT.Round(time.Millisecond), res.OK, ep.Breaker.State, ep.LastError)
	}
}
