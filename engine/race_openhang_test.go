package engine_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A deadline's race beside an attempt still running on an endpoint that
// answers sends nothing to an endpoint whose breaker is open and which
// hangs (nothing heard from it for breaker.cooldown): the race adds a
// request to an endpoint out of rotation and nothing to the client's
// chances. Under load (the other endpoints' attempts passing their
// deadlines while they answered other reads) a hung endpoint whose
// breaker had opened got 13 such reads in 0.7 s.
func TestFailover_DeadlineRaceSendsNothingToAnOpenBreakerThatHangs(t *testing.T) {
	t.Parallel()
	const cooldown = 300 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) {
		takeTurns(c)
		c.Breaker.Cooldown = cooldown
		// A second between deadlines: the other reads keep s1 and s2
		// heard within it on a loaded machine too.
		c.Breaker.AttemptTimeoutMin = time.Second
	}, sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(10 * time.Millisecond)})
	h.eng.UseProbeTrials() // no client read is a trial of s0: it stays out
	hung := h.sims[0]
	readUntilOpen(t, h, "s0", hung)
	hung.SetMode(sim.ModeHang)
	time.Sleep(2 * cooldown) // s0 gone quiet: nothing heard from it for a cooldown

	// s1 and s2 slow past their deadlines for eth_getBalance and answering
	// eth_blockNumber, which other clients keep asking: every balance read
	// passes two deadlines beside endpoints that answer, and only s0 is
	// left to race.
	var deadline time.Duration
	for _, ep := range h.status().Endpoints {
		deadline = max(deadline, ep.Methods["eth_getBalance"].AttemptTimeout)
	}
	slow := 2*deadline + 300*time.Millisecond
	for _, s := range h.sims[1:] {
		s.SetMethodLatency("eth_getBalance", slow)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			h.call(1000+i, "eth_blockNumber")
		}
	}()
	before := hung.MethodCount("eth_getBalance")
	var bad []string
	for i := range 2 {
		r := h.call(100+i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.endpoint == "s0" || r.attempts > 2 {
			bad = append(bad, fmt.Sprintf("read %d by %s, %d attempts in %s", i, r.endpoint, r.attempts, r.took.Round(time.Millisecond)))
		}
	}
	close(stop)
	wg.Wait()
	if got := hung.MethodCount("eth_getBalance") - before; got != 0 || len(bad) > 0 {
		ep := h.endpoint("s0")
		t.Fatalf("%d reads sent to s0 while its breaker was %s and it hung (deadline %s, s1 and s2 %s slower); want each read answered in 2 attempts by s1 or s2: %s", got, ep.Breaker.State, deadline, slow, strings.Join(bad, "; "))
	}
	if st := h.endpoint("s0").Breaker.State; st == engine.BreakerClosed {
		t.Fatalf("s0's breaker %s: the test needs it out", st)
	}
}
