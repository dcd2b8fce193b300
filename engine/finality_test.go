package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// op-node reads its L1's "finalized" and "safe" blocks again and again and
// takes a lower one for a reorg of what was final. One node never answers
// lower; two endpoints a few blocks apart did, answer by answer, through
// rpcdash. Now a lower answer is set aside while the other endpoint is
// asked, and the blocks returned never go back.
func TestFinality_FinalizedAndSafeBlocksNeverGoBack(t *testing.T) {
	for _, tag := range []string{"finalized", "safe"} {
		t.Run(tag, func(t *testing.T) {
			// No lag penalty: equals take turns, s1 is asked as often as s0.
			r := newHeadRig(t, 2, func(c *engine.Config) { c.Router.LagPenalty = time.Nanosecond })
			r.warmUp()
			r.sims[1].SetHeadLag(3) // within chain.max_head_lag: routed as usual
			asked := r.sims[1].MethodCount("eth_getBlockByNumber")
			var highest int64
			back, fromS1 := 0, 0
			var seen []int64
			for i := range 20 {
				rep := r.call(i, "eth_getBlockByNumber", tag, false)
				n := blockNumberOf(t, rep)
				if n < highest {
					back++
				}
				if rep.endpoint == "s1" {
					fromS1++
				}
				highest = max(highest, n)
				seen = append(seen, n-highest)
			}
			asked = r.sims[1].MethodCount("eth_getBlockByNumber") - asked
			t.Logf("20 reads of the %s block from s0 and s1 (3 blocks behind): %d below one already returned; s1 asked %d times, its answer relayed %d times; offsets from the highest %v",
				tag, back, asked, fromS1, seen)
			if asked == 0 {
				t.Fatal("s1 was never asked: the test shows nothing")
			}
			if back != 0 {
				t.Fatalf("the %s block went back %d times in 20 reads", tag, back)
			}
		})
	}
}
