package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// With --batch the upstream column counts calls (X-Rpcdash-Attempts, each
// call of a batch one request), and so does wasted: on the built-in sims
// it counted the cancelled HTTP requests, one per batch of K calls, so an
// immediate row of batches of 10 read "upstream 1860 … wasted 37" where
// the 37 losing batches carried 370 calls.
func TestCompare_BatchWasteCountsCalls(t *testing.T) {
	const k = 7
	mix, _ := bench.ParseMix("eth_getBalance=1")
	policies, err := bench.ParsePolicies("immediate", "", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := bench.Compare(context.Background(), bench.CompareConfig{
		Workload: bench.Workload{Mix: mix, Rate: 20, Duration: 1500 * time.Millisecond, Warmup: 200 * time.Millisecond, Seed: 1,
			Fanout: bench.Fanout{K: k, Q: k}, Batch: true},
		Scenario: quickScenario(2),
		Policies: policies,
		Start:    startEngine,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Rows[0]
	// Either count, the sims' or the engine's (the fuller one), is of calls.
	if r.Wasted == nil {
		t.Fatal("no wasted figure")
	}
	if w := r.Wasted.Cancelled; w == 0 || w%k != 0 || w > r.Upstream-int64(r.Calls.N) {
		t.Errorf("wasted %d calls, upstream %d for %d calls: want whole batches of %d, at most the duplicates", w, r.Upstream, r.Calls.N, k)
	}
}
