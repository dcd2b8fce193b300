package bench_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/sim"
)

// 429s are counted where they happen: the client sees them when it talks
// to the upstream itself; through rpcdash, which backs the method off and
// fails over, only the instance's attempt counters (its /metrics) know of
// them. One endpoint of three answers 30 % of its requests with 429. It
// is the quickest, so the router sends it reads from its first answer:
// all three answering at once, the router ranked them by their first
// answers, and under load one whose first answer carried its
// connection's setup was ranked behind by it and, hedging off, sent
// nothing in the run's 2 s (fresh-clone CI s64d-1).
func TestCompare_429ShareFromTheClientAndFromTheInstance(t *testing.T) {
	var cfgs []sim.Config
	for i := range 3 {
		c := sim.Config{Name: "s" + string(rune('0'+i)), Seed: int64(i + 1), Latency: sim.Latency{Median: 20 * time.Millisecond}}
		if i == 0 {
			c.RateLimitRate = 0.3
			c.Latency = sim.Latency{}
		}
		cfgs = append(cfgs, c)
	}
	sims, err := sim.StartSet(cfgs, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.CloseAll(sims)
	spec := bench.EngineSpec{}
	for i, u := range sims {
		spec.Endpoints = append(spec.Endpoints, bench.EndpointSpec{Name: u.Name(), URL: u.URL(), Provider: string(rune('a' + i))})
	}
	eng, err := startEngine(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()

	mix, _ := bench.ParseMix("eth_getBalance")
	w := bench.Workload{Mix: mix, Rate: 100, Duration: 2 * time.Second, Seed: 4}
	direct, err := bench.Compare(context.Background(), bench.CompareConfig{Workload: w, Target: bench.Target{URL: sims[0].URL()}})
	if err != nil {
		t.Fatal(err)
	}
	policies, _ := bench.ParsePolicies("off", "", "")
	routed, err := bench.Compare(context.Background(), bench.CompareConfig{Workload: w, Policies: policies,
		Target: bench.Target{URL: eng.RPCURL, Admin: bench.Admin{URL: eng.AdminURL}}})
	if err != nil {
		t.Fatal(err)
	}
	d, r := direct.Rows[0], routed.Rows[0]
	// The sim's 429 carries a JSON-RPC error body: an error answer.
	if d.Policy != "target" || math.Abs(d.Share429-0.3) > 0.08 || d.RPCErrors != d.Calls.N-d.OK {
		t.Errorf("direct: 429 share %.3f, %d JSON-RPC errors of %d: want about 0.3, all of them 429s", d.Share429, d.RPCErrors, d.Calls.N)
	}
	// Through rpcdash the backed-off endpoint is skipped for a while, so
	// fewer attempts meet a 429, but some do, and the clients see none.
	if r.Share429 <= 0 || r.Share429 > 0.3 || r.OK != r.Calls.N || r.Upstream <= int64(r.Calls.N) {
		t.Errorf("through rpcdash: 429 share %.3f, %d of %d ok, %d upstream; %s", r.Share429, r.OK, r.Calls.N, r.Upstream, r.FirstFailure)
	}
}
