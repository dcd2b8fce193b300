package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// finalityLagRig is three sims on the test clock: s1 has fallen 10 blocks
// behind (chain.max_head_lag 5) and a probe found it out, so it is
// lag-excluded; s0 and s2 are at the head. s1 answers in 1 ms, s0 and s2
// in 150 ms, and hedging is on at a fixed 15 ms with two hedges a request
// and room in the budget for every one: a read that s1 may take reaches it
// by its second hedge at the latest (30 ms, long before s0 or s2 answer),
// and s1 answers first. The attempt deadline (2 s) is far past every
// answer: only routing and hedging decide who is asked.
func finalityLagRig(t *testing.T, mut func(*engine.Config)) *headRig {
	t.Helper()
	r := newHeadRig(t, 3, func(c *engine.Config) {
		hedgeOn("15ms")(c)
		c.Hedge.MaxExtra = 2
		c.Hedge.Budget = 1
		c.Hedge.BudgetBurst = 1000
		c.Breaker.AttemptTimeoutMin = 2 * time.Second
		if mut != nil {
			mut(c)
		}
	})
	r.warmUp()
	r.sims[1].SetHeadLag(10)
	r.probeAll()
	if ep := r.endpoint("s1"); !ep.LagExcluded || ep.Lag != 10 {
		t.Fatalf("s1 10 blocks behind: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
	}
	for _, i := range []int{0, 2} {
		r.sims[i].SetLatency(fixed(150 * time.Millisecond))
	}
	return r
}

// finalityRead is one read of the test and what it must be answered with.
type finalityRead struct {
	method string
	params []any
}

// readAll sends every read n times, 8 at a time, and returns the replies;
// each must be a result.
func (r *headRig) readAll(reads []finalityRead, n int) []reply {
	r.t.Helper()
	replies := make([]reply, len(reads)*n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rd := reads[i%len(reads)]
				replies[i] = r.call(i, rd.method, rd.params...)
			}
		}()
	}
	for i := range replies {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, rep := range replies {
		if rep.status != 200 || !strings.Contains(string(rep.body), `"result"`) {
			r.t.Fatalf("%s: want a result, got HTTP %d %s", reads[i%len(reads)].method, rep.status, rep.body)
		}
	}
	return replies
}

// upstreamCounts are how many requests of each method each sim saw.
func (r *headRig) upstreamCounts(reads []finalityRead) map[string][3]int64 {
	out := map[string][3]int64{}
	for _, rd := range reads {
		var c [3]int64
		for i, u := range r.sims {
			c[i] = u.MethodCount(rd.method)
		}
		out[rd.method] = c
	}
	return out
}

// A lagging node's safe and finalized blocks lag the pool's as its head
// does (the sim's finalized block is its head - 64): a read at either tag
// is kept off an endpoint lag-excluded while a current one serves, hedges
// included. Before, "safe" and "finalized" were not tip-dependent, and s1
// took every such read by the second hedge (or as the primary).
func TestLag_SafeAndFinalizedReadsSkipALagExcludedEndpoint(t *testing.T) {
	for _, tag := range []string{"finalized", "safe"} {
		t.Run(tag, func(t *testing.T) {
			r := finalityLagRig(t, nil)
			reads := []finalityRead{
				{"eth_getBalance", []any{addr, tag}},
				{"eth_call", []any{map[string]string{"to": addr, "data": "0x"}, tag}},
				{"eth_getBlockByNumber", []any{tag, false}},
				{"eth_getLogs", []any{map[string]string{"fromBlock": "0x0", "toBlock": tag}}},
			}
			replies := r.readAll(reads, 6)
			hedged := 0
			for i, rep := range replies {
				if rep.endpoint == "s1" {
					t.Errorf("%s at %q answered by s1, lag-excluded (%d attempts)", reads[i%len(reads)].method, tag, rep.attempts)
				}
				if rep.hedged {
					hedged++
				}
			}
			for m, c := range r.upstreamCounts(reads) {
				if c[1] != 0 {
					t.Errorf("s1, lag-excluded, was sent %d of %s at %q (s0 %d, s2 %d)", c[1], m, tag, c[0], c[2])
				}
			}
			if hedged == 0 {
				t.Fatalf("no read was hedged: hedging is to be on and used (s0 and s2 answer in 150 ms, the delay is 15 ms)")
			}
			t.Logf("%d reads at %q, %d hedged, none sent to s1", len(replies), tag, hedged)
		})
	}
}

// With chain.pin, an untagged read is sent at the pinned level, and is
// kept off a lag-excluded endpoint just as it is unpinned: the pin never
// switches lag protection off. Before, the pinned tag was classified not
// tip-dependent and s1 took the reads. The calls of a batch are planned
// alike.
func TestPin_UntaggedReadsSkipALagExcludedEndpoint(t *testing.T) {
	t.Parallel()
	for _, pin := range []string{"finalized", "safe"} {
		t.Run(pin, func(t *testing.T) {
			r := finalityLagRig(t, func(c *engine.Config) { c.Chain.Pin = pin })
			reads := []finalityRead{
				{"eth_getBalance", []any{addr}},
				{"eth_call", []any{map[string]string{"to": addr, "data": "0x"}}},
				{"eth_getCode", []any{addr, nil}},
				{"eth_getTransactionCount", []any{addr}},
			}
			replies := r.readAll(reads, 6)
			hedged := 0
			for i, rep := range replies {
				if rep.endpoint == "s1" {
					t.Errorf("untagged %s, pinned %q, answered by s1, lag-excluded (%d attempts)", reads[i%len(reads)].method, pin, rep.attempts)
				}
				if rep.hedged {
					hedged++
				}
			}
			var batch []string
			for i := range 4 {
				batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":[%q]}`, i, addr))
			}
			rep := r.post("[" + strings.Join(batch, ",") + "]")
			for _, a := range batchReplies(t, rep, 4) {
				if a.Error != nil || len(a.Result) == 0 {
					t.Fatalf("batch element %d: %s", a.ID, rep.body)
				}
			}
			for m, c := range r.upstreamCounts(reads) {
				if c[1] != 0 {
					t.Errorf("s1, lag-excluded, was sent %d untagged %s pinned %q (s0 %d, s2 %d)", c[1], m, pin, c[0], c[2])
				}
			}
			// Every read went out at the pinned level.
			for _, u := range []int{0, 2} {
				for _, p := range r.sims[u].Requests("eth_getBalance") {
					var params []json.RawMessage
					if json.Unmarshal(p, &params) != nil || len(params) != 2 || string(params[1]) != `"`+pin+`"` {
						t.Fatalf("eth_getBalance sent to s%d as %s, want it pinned %q", u, p, pin)
					}
				}
			}
			if hedged == 0 {
				t.Fatalf("no read was hedged: hedging is to be on and used (s0 and s2 answer in 150 ms, the delay is 15 ms)")
			}
			t.Logf("%d untagged reads pinned %q and a batch, %d hedged, none sent to s1", len(replies), pin, hedged)
		})
	}
}

// Reads naming one block for good, by hash or "earliest", do not depend
// on the tip and stay open to the lag-excluded endpoint: here it takes
// them by the second hedge, as before.
func TestLag_ReadsAtABlockHashOrEarliestStillReachALagExcludedEndpoint(t *testing.T) {
	r := finalityLagRig(t, nil)
	hash := "0x" + strings.Repeat("ab", 32)
	reads := []finalityRead{
		{"eth_getBalance", []any{addr, "earliest"}},
		{"eth_getCode", []any{addr, map[string]string{"blockHash": hash}}},
	}
	r.readAll(reads, 6)
	for m, c := range r.upstreamCounts(reads) {
		if c[1] == 0 {
			t.Errorf("s1 was sent none of %d %s at a fixed block: it is out of tip-dependent reads only (s0 %d, s2 %d)", 6, m, c[0], c[2])
		}
	}
}
