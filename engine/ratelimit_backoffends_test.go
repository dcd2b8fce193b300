package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A read that starts while the pool's one healthy endpoint backs off its
// method after a 429 goes to the other endpoint; when that one hangs, the
// read is raced to the first once its back-off is over, as a client of it
// honouring the Retry-After would ask again. It was left out of the read's
// candidates altogether: with steady drained and tail hung, flaky's 2 %
// 429s made every read of the method in the next second wait for tail
// until server.request_timeout (10 s) and fail -32603, 4 of 1048 client
// requests in a minute, though flaky answered within 60 ms all along.
func TestRateLimit_ReadBesideAHangGoesToTheEndpointWhoseBackOffEnds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) { c.Server.RequestTimeout = 10 * time.Second },
		sim.Config{Latency: fixed(5 * time.Millisecond), RateLimitMethods: []string{"eth_getBalance"}, RetryAfter: 2 * time.Second},
		sim.Config{Latency: fixed(5 * time.Millisecond)})
	s0, s1 := h.sims[0], h.sims[1]
	s0.SetMode(sim.ModeRateLimit)
	h.untilDelivered(s0, "eth_getBalance", addr, "latest") // 429, answered by s1
	s0.SetMode(sim.ModeNormal)
	s1.SetMode(sim.ModeHang)
	until := h.endpoint("s0").Methods["eth_getBalance"].BackoffUntil
	if time.Until(until) < time.Second {
		t.Fatalf("s0's eth_getBalance back-off ends at %v, in %v: want it running when the read starts", until, time.Until(until))
	}

	r := h.call(1, "eth_getBalance", addr, "latest")
	if r.status != 200 || r.rpcError() != nil || r.endpoint != "s0" {
		t.Fatalf("read started while s0 backs off and s1 hangs: HTTP %d from %q after %v, %s; want s0's answer once its back-off ends (in %v)",
			r.status, r.endpoint, r.took.Round(time.Millisecond), r.body, time.Until(until))
	}
	if r.attempts != 2 {
		t.Errorf("%d attempts, want 2 (s1 hung, then s0)", r.attempts)
	}
}
