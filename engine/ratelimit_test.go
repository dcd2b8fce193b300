package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

func TestRateLimit_BackedOffUntilRetryAfterAndNoClientError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{RetryAfter: 2 * time.Second}, sim.Config{}, sim.Config{})
	h.sims[0].SetMode(sim.ModeRateLimit)
	mustOK(t, h.call(0, "eth_getBalance", addr, "latest")) // s0 first (cold rotation): 429, failover
	// One method's 429 backs off that method on s0, not s0.
	ep := h.endpoint("s0")
	until := ep.Methods["eth_getBalance"].BackoffUntil
	if until.IsZero() || !ep.BackoffUntil.IsZero() || !ep.Routable {
		t.Fatalf("status shows no back-off of eth_getBalance on s0 alone: %+v", ep)
	}
	// Every request below is sent before the back-off ends.
	for i := 1; i < 60 && time.Until(until) > 0; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if got := h.sims[0].MethodCount("eth_getBalance"); got != 1 {
		t.Fatalf("rate-limited endpoint got %d requests inside its Retry-After", got)
	}
	// After the back-off it is tried again.
	h.sims[0].SetMode(sim.ModeNormal)
	testutil.WaitUntil(t, 5*time.Second, "back-off end", func() bool { return time.Now().After(until) })
	for i := 0; i < 30; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if h.sims[0].MethodCount("eth_getBalance") < 2 {
		t.Fatal("endpoint not used after its back-off")
	}
}

// A probe that meets a 429 backs the whole endpoint off (it stands for no
// client method), and no probe is sent until the back-off ends.
func TestRateLimit_ProbeStartsTheBackOffAndWaitsItOut(t *testing.T) {
	h := newHarness(t, nil, sim.Config{RetryAfter: 2 * time.Second}, sim.Config{})
	h.sims[0].SetMode(sim.ModeRateLimit)
	res, err := h.eng.Probe(context.Background(), "s0", "eth_blockNumber", nil)
	if err != nil || res.OK {
		t.Fatalf("probe of a rate-limited endpoint: ok=%v err=%v", res.OK, err)
	}
	if ep := h.endpoint("s0"); ep.BackoffUntil.IsZero() || ep.Routable {
		t.Fatalf("a probe's 429 started no back-off: %+v", ep)
	}
	if _, err := h.eng.Probe(context.Background(), "s0", "eth_blockNumber", nil); !errors.Is(err, engine.ErrBackingOff) {
		t.Fatalf("second probe inside the back-off: %v, want ErrBackingOff", err)
	}
	if got := h.sims[0].Counters().Total; got != 1 {
		t.Fatalf("rate-limited endpoint got %d probes, want the 1 that met the 429", got)
	}
}
