package engine_test

import (
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// While rpcdash itself is the slow part (past hedge.max_inflight) an
// overdue read's race waits and is looked at again a deadline later. When
// that look would come after the request's own deadline, waiting again is
// a certain error: the read races then, its last chance. Seen under a load
// average of 7-12: "-32603 request timed out (s0 still working on it)"
// beside an endpoint that answered every other read.
func TestRace_HeldWhileOverloadedGoesBeforeTheRequestsDeadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) {
		c.Server.RequestTimeout = 2 * time.Second
		c.Breaker.AttemptTimeoutMin = 800 * time.Millisecond
		c.Breaker.Cooldown = time.Minute
		c.Hedge.MaxInflight = 2
	}, sim.Config{Latency: fixed(5 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	for i := range 30 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	// Three slow calls in flight on s2, none on s0: rpcdash is past its
	// in-flight limit, and not because of s0.
	h.sims[2].SetMethodLatency("eth_call", 3*time.Second)
	for _, name := range []string{"s0", "s1"} {
		if err := h.eng.Drain(engine.ActorAdmin, name); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.call(100+i, "eth_call", map[string]any{"to": addr, "data": "0x"}, "latest")
		}()
	}
	defer wg.Wait()
	for i := 0; h.status().InFlight < 3; i++ {
		if i == 1000 {
			t.Fatalf("%d requests in flight, want the 3 slow calls", h.status().InFlight)
		}
		time.Sleep(time.Millisecond)
	}
	for _, name := range []string{"s0", "s1"} {
		if err := h.eng.Undrain(engine.ActorAdmin, name); err != nil {
			t.Fatal(err)
		}
	}
	h.sims[0].SetMode(sim.ModeHang)
	r := h.call(200, "eth_getBalance", addr, "latest")
	if r.status != 200 || r.rpcError() != nil {
		t.Fatalf("read beside a hung s0 while rpcdash was past its in-flight limit: HTTP %d %s after %s in %d attempts; want s1's or s2's answer before the 2 s request deadline", r.status, r.body, r.took.Round(time.Millisecond), r.attempts)
	}
	if r.endpoint == "s0" {
		t.Fatalf("answered by the hung s0")
	}
	t.Logf("answered by %s after %s in %d attempts", r.endpoint, r.took.Round(time.Millisecond), r.attempts)
}
