package engine_test

import (
	"context"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
)

// A probe's failure counts against its endpoint, not in the accounting of
// client requests by method.
func TestProbe_FailureCountsForTheEndpointNotTheMethod(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	h.sims[0].SetMode(sim.ModeError)
	if res, err := h.eng.Probe(context.Background(), "s0", "eth_blockNumber", nil); err != nil || res.OK {
		t.Fatalf("probe of a failing endpoint: ok=%v err=%v", res.OK, err)
	}
	st := h.status()
	if m, ok := st.Methods["eth_blockNumber"]; ok && m.Failures != 0 {
		t.Fatalf("probe failure charged to client accounting: %+v", m)
	}
	if st.Totals.Failures != 0 {
		t.Fatalf("totals count %d failures without a client request", st.Totals.Failures)
	}
	if ep := h.endpoint("s0"); ep.Rates.Failures != 1 || ep.Breaker.ConsecutiveFailures != 1 {
		t.Fatalf("endpoint did not hear of the probe's failure: %+v %+v", ep.Rates, ep.Breaker)
	}
}
