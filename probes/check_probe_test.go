package probes

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint charged a hang it has said nothing since is probed again at
// once, not a probes.interval later: the router ranks it behind the others
// after that one charge, and at low traffic no client read brings the
// next. Its breaker waited for one probe per interval to make up
// breaker.failures (a timeout fault on the shipped config's flaky
// endpoint: open after 12.7 to 25 s). Here, with a 5 s interval, the hung
// endpoint's breaker opens within 4 s of the fault: one client read's
// charge and two probes' (600 ms each, listening 1 s). Its window holds
// too few answers for one attempt's silence to count again.
func TestCheck_AHungEndpointRankedBehindIsProbedUntilItsBreakerOpens(t *testing.T) {
	normal := sim.Latency{Median: 40 * time.Millisecond, Sigma: 0.1}
	r := newRig(t, func(c *engine.Config) {
		c.Probes.Interval = 5 * time.Second
		c.Probes.Timeout = 600 * time.Millisecond
		c.Server.RequestTimeout = 3 * time.Second // an attempt with nothing learned, and a probe, listen 1 s
		c.Breaker.Cooldown = 10 * time.Second
	}, sim.Config{Latency: normal}, sim.Config{Latency: normal}, sim.Config{Latency: normal})
	r.waitHeads()
	for range 30 {
		r.mustAnswer(r.call("eth_getBalance", "0x00000000000000000000000000000000000000aa", "latest"))
	}
	fault := time.Now()
	r.sims[0].SetMode(sim.ModeHang)
	// One read at a time until one has met the hang and failed over.
	met := false
	for i := 0; i < 40 && !met; i++ {
		r.mustAnswer(r.call("eth_getBalance", "0x00000000000000000000000000000000000000aa", "latest"))
		_, met = r.event(func(ev engine.Event) bool { return ev.Endpoint == "s0" && ev.Type == engine.EventFailover })
	}
	if !met {
		t.Fatal("no read reached s0 after the fault: the test did not exercise the hang")
	}
	open := r.waitEvent(10*time.Second, "s0's breaker open", breakerOpened("s0"))
	if took := open.Time.Sub(fault); took > 4*time.Second {
		t.Fatalf("s0 hung: breaker open %s after the fault, want within 4s (probes every 5s, one charge per probe round)", took.Round(time.Millisecond))
	} else {
		t.Logf("s0 hung: breaker open %s after the fault: %s", took.Round(time.Millisecond), open.Message)
	}
	if n := r.endpoint("s0").Latency.Count; n >= 100 {
		t.Fatalf("s0 holds %d answers: one attempt's silence could count again, and the test would not show the probes'", n)
	}
}

func breakerOpened(name string) func(engine.Event) bool {
	return func(ev engine.Event) bool {
		return ev.Endpoint == name && ev.Type == engine.EventBreaker && ev.To == "open"
	}
}
