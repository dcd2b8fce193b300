package engine_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The calls of a losing upstream batch shared one upstream request: its
// upstream time is counted once, in the method's and the endpoint's
// accounting alike (loser_upstream_seconds, and /metrics from it), not
// once per call. s0 holds a batch of 50 until it is let go; its hedge on
// s1 answers. Each call was counted with the whole batch's time: 10
// losing batches of 10 that ran about 0.46 s read 51 s of upstream time
// in a serve run, where the sims had spent about 5.
func TestBatch_ALosingUpstreamBatchCountsItsUpstreamTimeOnce(t *testing.T) {
	t.Parallel()
	_, h2, _ := heldFirstBatchPair(t)
	const n = 50
	before := h2.status()
	r := h2.post(balanceBatch(n, strconv.Itoa))
	decodeBatch(t, r, n)
	if !r.hedged || r.endpoint != "s1" {
		t.Fatalf("answered by %q, hedged %v; want s1's hedge", r.endpoint, r.hedged)
	}
	var ran time.Duration
	for _, a := range h2.settledTrace(strings.Split(r.id, ",")[0]).Attempts {
		if a.Endpoint == "s0" && a.EndMS != nil {
			ran = time.Duration((*a.EndMS - a.StartMS) * float64(time.Millisecond))
		}
	}
	if ran <= 0 {
		t.Fatal("the trace shows no ended attempt on s0")
	}
	after := h2.status()
	deadline := time.Now().Add(5 * time.Second)
	for after.Methods["eth_getBalance"].Losers-before.Methods["eth_getBalance"].Losers < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		after = h2.status()
	}
	method := after.Methods["eth_getBalance"].LoserTime - before.Methods["eth_getBalance"].LoserTime
	endpoint := after.Endpoints[0].Accounting.LoserTime - before.Endpoints[0].Accounting.LoserTime
	if after.Endpoints[0].Name != "s0" {
		t.Fatalf("endpoint 0 is %s, want s0", after.Endpoints[0].Name)
	}
	low, high := ran*9/10-5*time.Millisecond, ran*11/10+5*time.Millisecond
	for what, got := range map[string]time.Duration{"eth_getBalance": method, "s0": endpoint} {
		if got < low || got > high {
			t.Errorf("%s: the losing batch's calls used %v of upstream time, want the %v s0's one upstream request ran", what, got, ran)
		}
	}
}
