package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/sim"
)

// Every upstream request beyond the one that answered a call was thrown
// away, and the wasted column counts it, also on the built-in sims: a
// loser past its attempt deadline is kept running to its answer as a tail
// sample (the engine's stopRest), which no sim sees cancelled, so the
// sims' cancellations alone read "off … amp 1.01, wasted 0 (0 s)" where
// the instance counted 5 losers and 3.6 upstream seconds.
func TestCompare_WasteCountsLosersKeptRunning(t *testing.T) {
	mix, _ := bench.ParseMix("eth_getBalance=1")
	policies, err := bench.ParsePolicies("off", "", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := bench.Compare(context.Background(), bench.CompareConfig{
		Workload: bench.Workload{Mix: mix, Rate: 20, Duration: 3 * time.Second, Warmup: 500 * time.Millisecond, Seed: 1},
		Scenario: sim.Scenario{Endpoints: 3, Seed: 1, Latency: sim.Latency{Median: 10 * time.Millisecond, Sigma: 0.3,
			TailProb: 0.1, TailMin: 600 * time.Millisecond, TailMax: 700 * time.Millisecond}},
		Policies: policies,
		Start:    startEngine,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Rows[0]
	if r.OK != r.Calls.N {
		t.Fatalf("%d of %d calls answered: want every one", r.OK, r.Calls.N)
	}
	thrown := r.Upstream - int64(r.Calls.N)
	if thrown <= 0 {
		t.Fatalf("upstream %d for %d calls: the scenario made no failover to throw away", r.Upstream, r.Calls.N)
	}
	if r.Wasted == nil || r.Wasted.Cancelled < thrown || r.Wasted.Seconds <= 0 {
		t.Errorf("wasted %+v, upstream %d for %d answered calls: want at least the %d requests thrown away", r.Wasted, r.Upstream, r.Calls.N, thrown)
	}
}
