package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

func TestRouter_SlowEndpointAvoidedButExploredNowAndThen(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Router.ExploreAfter = 300 * time.Millisecond },
		sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(60 * time.Millisecond)})
	for i := 0; i < 20; i++ { // learn both
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	before := h.sims[1].MethodCount("eth_getBalance")
	start := time.Now()
	n := 0
	for time.Since(start) < 1500*time.Millisecond {
		mustOK(t, h.call(n, "eth_getBalance", addr, "latest"))
		n++
	}
	elapsed := time.Since(start)
	got := h.sims[1].MethodCount("eth_getBalance") - before
	most := int64(elapsed/(300*time.Millisecond)) + 1
	if got < 1 || got > most {
		t.Fatalf("slow endpoint served %d of %d reads in %s; want between 1 and %d explorations", got, n, elapsed, most)
	}
	t.Logf("slow endpoint explored %d times in %d reads over %s", got, n, elapsed)
}

// The stats window is minutes of memory: an endpoint whose answers went
// from 10 ms to 110 ms (under its deadline: nothing fails, nothing is
// charged) kept its 10 ms figure until the slow answers were half the
// window, taking every read. The median of its last three answers is a
// floor under the figure: two slow answers steer the reads away, and
// answers in time (an exploration) bring them back. The slowness (110 ms)
// leaves a busy machine 890 ms before the test's 1 s deadline floor (the
// default 250 ms was passed at a load average of 5).
func TestRouter_AnEndpointThatTurnsSlowIsLeftAfterTwoSlowAnswers(t *testing.T) {
	t.Parallel()
	const slow = 100 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) { c.Router.ExploreAfter, c.Breaker.AttemptTimeoutMin = time.Second, time.Second },
		sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(30 * time.Millisecond)})
	for i := range 200 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if m := h.endpoint("s0").Methods["eth_getBalance"]; m.Latency.Count < 50 {
		t.Fatalf("s0 answered %d reads of the warm-up; want most of them", m.Latency.Count)
	}
	served := func() (s0, s1 int64) {
		return h.sims[0].MethodCount("eth_getBalance"), h.sims[1].MethodCount("eth_getBalance")
	}

	h.sims[0].SetExtraLatency(slow)
	a0, a1 := served()
	start := time.Now()
	for i := range 20 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	// Two slow answers, then an exploration per router.explore_after (1 s)
	// the 20 reads took: on a loaded machine they took 2 s and more, and s0
	// was rightly explored again (5 reads).
	most := 2 + int64(time.Since(start)/time.Second) + 1
	b0, b1 := served()
	if got := b0 - a0; got > most || b1-a1 < 20-most {
		t.Fatalf("after s0 turned %s slower: 20 reads in %s, %d to s0 and %d to s1; want at most %d (two slow answers, an exploration a second) to s0",
			slow, time.Since(start).Round(time.Millisecond), got, b1-a1, most)
	}
	if ep := h.endpoint("s0"); ep.Breaker.ConsecutiveFailures != 0 || ep.Methods["eth_getBalance"].Overdue != 0 {
		t.Fatalf("s0 was charged (%d in a row, %d overdue): the test wants slowness under the deadline", ep.Breaker.ConsecutiveFailures, ep.Methods["eth_getBalance"].Overdue)
	}

	h.sims[0].SetExtraLatency(0)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		mustOK(t, h.call(0, "eth_getBalance", addr, "latest"))
		if c0, _ := served(); c0-b0 >= 10 {
			break
		}
	}
	c0, _ := served()
	if c0-b0 < 10 {
		t.Fatalf("s0 answers in 10 ms again but took %d reads in 10 s; want it back as the primary", c0-b0)
	}
	t.Logf("s0 +%s: %d of 20 reads, then back to s0 after it recovered", slow, b0-a0)
}
