package probes

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// slowAnswer is every answer's time in these tests: three times
// probes.timeout (slowProbeTimeout), far inside the attempt deadline (cold:
// a third of the rig's 5s request timeout; learned: 3 × the p99, 450ms).
const (
	slowAnswer       = 150 * time.Millisecond
	slowProbeTimeout = 50 * time.Millisecond
)

// A pool whose every answer is slower than probes.timeout is slow, not
// down: the probes wait as long as client attempts would, get their
// answers, and no breaker opens (the drill: two endpoints answering in
// 2-8 s, probes.timeout 2 s; one breaker opened, the other was held
// closed by breaker.max_open_share and said so on every probe).
func TestProbe_SlowButAnsweringPoolStaysIn(t *testing.T) {
	slow := sim.Config{Latency: sim.Latency{Median: slowAnswer}}
	r := newRig(t, func(c *engine.Config) { c.Probes.Timeout = slowProbeTimeout }, slow, slow)
	const probes = 12 // a failed probe makes the next round an eth_chainId: count them all
	testutil.WaitUntil(t, 20*time.Second, "12 probes of each endpoint", func() bool {
		return r.sims[0].Counters().Total >= probes && r.sims[1].Counters().Total >= probes
	})
	var flood []string
	for _, ev := range r.eng.Events(0) {
		if ev.Type == engine.EventBreaker || ev.To == "open refused" {
			flood = append(flood, ev.Endpoint+": "+ev.From+">"+ev.To+" "+ev.Message)
		}
	}
	for _, name := range []string{"s0", "s1"} {
		ep := r.endpoint(name)
		if ep.Breaker.State != engine.BreakerClosed || ep.Rates.Failures != 0 {
			t.Fatalf("%s answers every probe in %s (probes.timeout %s): breaker %s, %d failures; events:\n%s",
				name, slowAnswer, slowProbeTimeout, ep.Breaker.State, ep.Rates.Failures, strings.Join(flood, "\n"))
		}
	}
	if len(flood) > 0 {
		t.Fatalf("breaker or open-refused events for a pool that answers everything:\n%s", strings.Join(flood, "\n"))
	}
	t.Logf("%d and %d probes answered in %s with probes.timeout %s: both breakers closed, no failure, no event",
		r.sims[0].Counters().Total, r.sims[1].Counters().Total, slowAnswer, slowProbeTimeout)
}

// The trials of an open breaker are probes: once the endpoint answers
// again, slowly but within its attempt deadline, its trials succeed and
// the breaker closes, instead of each trial timing out at probes.timeout
// and doubling the cooldown for ever.
func TestProbe_HalfOpenTrialsOfASlowEndpointClose(t *testing.T) {
	r := newRig(t, func(c *engine.Config) {
		c.Probes.Timeout = slowProbeTimeout
		c.Breaker.Cooldown = 100 * time.Millisecond
		c.Breaker.MaxCooldown = time.Minute
	}, sim.Config{Latency: sim.Latency{Median: slowAnswer}}, sim.Config{})
	down := r.sims[0]
	down.SetMode(sim.ModeError)
	r.waitEvent(5*time.Second, "s0's breaker opening on failed probes", func(ev engine.Event) bool {
		return ev.Type == engine.EventBreaker && ev.Endpoint == "s0" && ev.To == "open"
	})
	down.SetMode(sim.ModeNormal) // up again, every answer slowAnswer
	closed := testutil.Poll(5*time.Second, func() bool {
		_, ok := r.event(func(ev engine.Event) bool {
			return ev.Type == engine.EventBreaker && ev.Endpoint == "s0" && ev.To == "closed"
		})
		return ok
	})
	reopened := 0
	for _, ev := range r.eng.Events(0) {
		if ev.Type == engine.EventBreaker && ev.Endpoint == "s0" && ev.From == "half-open" && ev.To == "open" {
			reopened++
		}
	}
	ep := r.endpoint("s0")
	if !closed {
		t.Fatalf("s0 answers in %s (probes.timeout %s) but its breaker did not close in 5s: %d trials failed, now %s with cooldown %s",
			slowAnswer, slowProbeTimeout, reopened, ep.Breaker.State, ep.Breaker.Cooldown)
	}
	t.Logf("s0 answering in %s with probes.timeout %s: closed after its trials, %d failed", slowAnswer, slowProbeTimeout, reopened)
}
