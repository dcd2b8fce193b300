package engine_test

import (
	"fmt"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A client's getProgramAccounts of a big program is answered over
// server.max_response_bytes by every endpoint: the size is the request's,
// not a fault of any endpoint. The client gets the error naming the bound,
// and no breaker opens: the other clients' reads keep every endpoint. An
// endpoint alone in answering too much, while another answers within the
// bound, is still charged.
func TestSolana_ReadTooBigForEveryEndpointOpensNoBreaker(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Chain.Kind = "solana"
		c.Server.MaxResponseBytes = 1 << 20
	}, sim.Config{Chain: sim.ChainSolana, Latency: fixed(0)}, sim.Config{Chain: sim.ChainSolana, Latency: fixed(0)})
	for _, u := range h.sims {
		setMode(t, u, sim.ControlRequest{Mode: ptr(string(sim.ModeHugeAnswer)), HugeBytes: ptr(int64(2 << 20))})
	}
	const reads = 8
	for i := range reads {
		r := h.call(i, "getProgramAccounts", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
		if e := r.rpcError(); e == nil {
			t.Fatalf("read %d: %.200s, want the error naming server.max_response_bytes", i, r.body)
		}
	}
	var open []string
	for _, ep := range h.status().Endpoints {
		if ep.Breaker.State != engine.BreakerClosed || ep.Breaker.ConsecutiveFailures > 0 {
			open = append(open, fmt.Sprintf("%s %v (%d in a row)", ep.Name, ep.Breaker.State, ep.Breaker.ConsecutiveFailures))
		}
	}
	t.Logf("%d reads too big for every endpoint: breakers charged %v", reads, open)
	if len(open) > 0 {
		t.Fatalf("%d reads too big for every endpoint charged breakers: %v", reads, open)
	}

	setMode(t, h.sims[1], sim.ControlRequest{Mode: ptr(string(sim.ModeNormal))})
	for i := range 4 {
		mustOK(t, h.call(100+i, "getBalance", solanaKey))
	}
	if s0 := h.endpoint("s0"); s0.Breaker.ConsecutiveFailures == 0 && s0.Breaker.State == engine.BreakerClosed {
		t.Fatalf("s0 answered too much where s1 answered within the bound, and its breaker heard nothing")
	}
}
