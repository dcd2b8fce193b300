package engine_test

import (
	"testing"
	"time"
)

// An endpoint whose head probe answers without a head is credited no block
// made after that answer: while the pool head rises, its lag grows with it
// and past chain.max_head_lag it is out of tip-dependent reads.
func TestHeads_NoBlockIsCreditedAfterAProbeWithoutAHead(t *testing.T) {
	r := newHeadRig(t, 2, nil)
	r.warmUp()
	for i := range r.lag + 3 {
		r.clock.Advance(time.Second)
		r.eng.ObserveProbeHead("s0", r.sims[0].Head())
		r.eng.ObserveProbeNoHead("s1", "JSON-RPC error -32603: internal error")
		if ep := r.endpoint("s1"); ep.Lag < i {
			t.Fatalf("%d s after its last head: s1 lag %d", i+1, ep.Lag)
		}
	}
	if ep := r.endpoint("s1"); !ep.LagExcluded {
		t.Fatalf("%d s without a head: s1 lag %d, not excluded (chain.max_head_lag %d)", r.lag+3, ep.Lag, r.lag)
	}
}
