package engine_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// After a slowdown of the whole pool, each endpoint back at its pace has
// the slowdown's answers forgotten, and one slow on its own afterwards is
// seen so: its reads go to the others. The slowdown's answers held every
// endpoint's routing figure at the slowdown's pace for minutes, so one
// slowed by 1 s on its own after it still took a third of the reads.
func TestPool_AfterASlowdownEachEndpointIsJudgedByItsOwnPaceAgain(t *testing.T) {
	lat := sim.Latency{Median: 20 * time.Millisecond, Sigma: 0.1}
	h := newHarness(t, func(c *engine.Config) { c.Breaker.Cooldown = time.Minute },
		sim.Config{Latency: lat}, sim.Config{Latency: lat}, sim.Config{Latency: lat})
	h.warm(60)
	var slowing sync.WaitGroup
	started := false
	replies := openLoop(h, 10*time.Millisecond, 4*time.Second, func(el time.Duration) {
		if !started && el >= 500*time.Millisecond {
			started = true
			slowing.Add(1)
			go func() {
				defer slowing.Done()
				for _, u := range h.sims {
					u.SetExtraLatency(600 * time.Millisecond)
				}
				time.Sleep(3 * time.Second)
				// The pool's slowdown ends, and s0 stays slow on its own.
				h.sims[0].SetExtraLatency(300 * time.Millisecond)
				h.sims[1].SetExtraLatency(0)
				h.sims[2].SetExtraLatency(0)
			}()
		}
	})
	slowing.Wait()
	for _, tr := range replies {
		mustOK(t, tr.r)
	}
	if len(poolEvents(h, "slow")) == 0 || stalled(h) {
		t.Fatalf("no slowdown of the pool seen (events %+v)", h.events())
	}
	back := func(name string) bool {
		for _, ev := range h.events() {
			if ev.Type == engine.EventPool && ev.Endpoint == name && strings.HasPrefix(ev.Message, "back at its pace after the slowdown") {
				return true
			}
		}
		return false
	}
	// Reads until an endpoint the slowdown left is back at its pace and
	// the hedge delay's primaries have forgotten the slowdown (s0's own
	// slow answers since are at 320 ms).
	counted := func() int64 { return h.endpoint("s1").Rates.Attempts + h.endpoint("s2").Rates.Attempts }
	before := counted()
	i := 10_000
	forgotten := func() bool {
		dist, err := h.eng.MethodDistribution("eth_getBalance")
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range dist.Primary.Buckets {
			if b.Low >= 500*time.Millisecond {
				return false
			}
		}
		return true
	}
	if !testutil.Poll(15*time.Second, func() bool {
		i++
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
		return (back("s1") || back("s2")) && forgotten()
	}) {
		t.Fatalf("within 15 s after the slowdown: s1 back %v, s2 back %v, the primaries forgot it %v; events %+v", back("s1"), back("s2"), forgotten(), h.events())
	}
	if back("s0") {
		t.Fatal("s0, slowed by 300 ms on its own, found back at its pace")
	}
	if after := counted(); after < before {
		t.Errorf("s1 and s2 count %d attempts after forgetting the slowdown's answers, %d before: the counts are kept", after, before)
	}
	toS0 := 0
	for range 40 {
		i++
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.endpoint == "s0" {
			toS0++
		}
	}
	// Exploration gives s0 a read now and then (router.explore_after); with
	// the slowdown's answers kept, s0 took 20 of 40.
	if toS0 > 5 {
		t.Errorf("%d of 40 reads went to s0, slowed by 300 ms on its own after the slowdown; want the others (s0's figure %v, s1's %v)",
			toS0, h.endpoint("s0").Methods["eth_getBalance"].Score.Latency, h.endpoint("s1").Methods["eth_getBalance"].Score.Latency)
	}
}
