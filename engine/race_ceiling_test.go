package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// raceCeilingHarness is a pool whose first endpoint's learnt deadline is
// the request's own (1 s): s0 answers in 400 ms (× factor 3 = 1.2 s,
// "ceiling"), the standby s1 in 20 ms, so that reads go to s0 first.
func raceCeilingHarness(t *testing.T) *harness {
	t.Helper()
	h := standbyBehind(t, 400*time.Millisecond, func(c *engine.Config) { c.Server.RequestTimeout = time.Second })
	// Past minRouteSamples answers of s0's own, however many a loaded
	// machine lets race s1 meanwhile (bounded).
	for i := 0; h.endpoint("s0").Methods["eth_getBalance"].Latency.Count < 6; i++ {
		if i == 30 {
			t.Fatalf("s0 answered %d of 30 warm-up reads", h.endpoint("s0").Methods["eth_getBalance"].Latency.Count)
		}
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	return h
}

// An endpoint whose learnt deadline reached the request's ("ceiling") and
// then hung was raced at the request's deadline, that is never: the client
// got "request timed out ... (s0 still working on it)" where s1 answers in
// 20 ms. Now the read races s1 at half the request's deadline and s1's
// answer is relayed within it.
func TestDeadline_HungEndpointAtTheCeilingIsRacedWithinTheRequestDeadline(t *testing.T) {
	t.Parallel()
	h := raceCeilingHarness(t)
	m := h.endpoint("s0").Methods["eth_getBalance"]
	t.Logf("s0 after %d answers: attempt deadline %s (%s)", m.Latency.Count, m.AttemptTimeout, m.AttemptTimeoutSource)
	if m.AttemptTimeout > 500*time.Millisecond || m.AttemptTimeoutSource != "half" {
		t.Errorf("s0's attempt deadline in the Snapshot %s (%s), want at most half the 1s request deadline (half): where a read races s1", m.AttemptTimeout, m.AttemptTimeoutSource)
	}
	h.sims[0].SetMode(sim.ModeHang)
	for i := range 3 {
		r := h.call(100+i, "eth_getBalance", addr, "latest")
		if r.status != 200 || r.endpoint != "s1" || r.rpcError() != nil {
			t.Fatalf("read %d beside the hung s0: status %d from %q in %d attempts, %s; want s1's answer within the 1s request deadline", i, r.status, r.endpoint, r.attempts, r.body)
		}
		t.Logf("read %d: s1's answer in %s, %d attempts", i, r.took.Round(time.Millisecond), r.attempts)
	}
	// Each hang is still charged, before the request's deadline ends the
	// held attempt: judged at the request's deadline, the verdict was lost
	// to it (0 to 2 charges in 3 hung reads, the breaker closed).
	b := h.endpoint("s0").Breaker
	for deadline := time.Now().Add(5 * time.Second); b.State != engine.BreakerOpen && time.Now().Before(deadline); b = h.endpoint("s0").Breaker {
		time.Sleep(10 * time.Millisecond)
	}
	if b.State != engine.BreakerOpen {
		t.Errorf("s0's breaker %s with %d hangs charged in a row after 3 hung reads, want open (breaker.failures 3)", b.State, b.ConsecutiveFailures)
	}
	if n := h.status().Methods["eth_getBalance"].ClientErrors; n != 0 {
		t.Errorf("%d client errors, want 0", n)
	}
}

// Raced at half the request's deadline, an endpoint answering slowly at its
// own pace (700 ms, within its 1 s deadline) is not charged a hang: its
// verdict stays at its own deadline, and its answers come before it.
func TestDeadline_SlowEndpointRacedAtHalfTheRequestDeadlineIsNotCharged(t *testing.T) {
	t.Parallel()
	h := raceCeilingHarness(t)
	h.sims[0].SetExtraLatency(300 * time.Millisecond)
	raced := 0
	for i := range 4 {
		r := h.call(100+i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.attempts > 1 {
			raced++
		}
	}
	if raced == 0 {
		t.Fatal("no read raced s1 beside the 700 ms s0: the test did not exercise the race deadline")
	}
	// The raced attempts of s0 run on to their answers (700 ms), before
	// their verdict (1 s): look once each overdue one has answered.
	ep := h.endpoint("s0")
	m := ep.Methods["eth_getBalance"]
	for wait := time.Now().Add(3 * time.Second); m.LateAnswers < m.Overdue && time.Now().Before(wait); m = ep.Methods["eth_getBalance"] {
		time.Sleep(20 * time.Millisecond)
		ep = h.endpoint("s0")
	}
	t.Logf("%d of 4 reads raced; s0 %s (%s), %d overdue, %d late answers", raced, m.AttemptTimeout, m.AttemptTimeoutSource, m.Overdue, m.LateAnswers)
	if ep.Breaker.State != engine.BreakerClosed || ep.Breaker.ConsecutiveFailures != 0 || ep.Accounting.Failures != 0 {
		t.Errorf("s0 answering at its pace: breaker %s, %d failures in a row, %d failures counted; want closed, 0, 0", ep.Breaker.State, ep.Breaker.ConsecutiveFailures, ep.Accounting.Failures)
	}
	for _, ev := range h.events() {
		if ev.Endpoint == "s0" && ev.Type == "breaker" {
			t.Errorf("s0: %s", ev.Message)
		}
	}
}
