package engine_test

import (
	"testing"
	"time"
)

// Heads are seen at different moments: an endpoint probed half a block
// before the pool head rose is credited the block the chain may have made
// in that half (rounded up), not shown one behind. Rounded down, every
// healthy endpoint probed just before a block boundary showed lag 1.
func TestHeads_AHeadSeenHalfABlockBeforeThePoolHeadShowsNoLag(t *testing.T) {
	r := newHeadRig(t, 2, nil)
	r.warmUp()
	for i := range 3 {
		// To just past a block boundary (50 ms at most), then s1 probed
		// 600 ms in, before the next block, and s0 500 ms later, after it.
		for h := r.sims[0].Head(); r.sims[0].Head() == h; {
			r.clock.Advance(50 * time.Millisecond)
		}
		r.clock.Advance(600 * time.Millisecond)
		h1 := r.sims[1].Head()
		r.eng.ObserveProbeHead("s1", h1)
		r.clock.Advance(500 * time.Millisecond)
		h0 := r.sims[0].Head()
		r.eng.ObserveProbeHead("s0", h0)
		if h0 != h1+1 {
			t.Fatalf("round %d: s0 at %d, s1 at %d: the test needs one block between the two probes", i, h0, h1)
		}
		if ep := r.endpoint("s1"); ep.Lag != 0 || ep.LagExcluded {
			t.Fatalf("round %d: s1 in sync, probed half a block before s0 raised the pool head to %d: lag %d, excluded %v",
				i, r.status().MaxHead, ep.Lag, ep.LagExcluded)
		}
	}
}
