package engine_test

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An upstream batch whose endpoint a probe finds on the wrong chain while
// the batch is in flight has none of its answers taken: they are another
// chain's, as a single read's answer from there is (offChain). s0 is found
// on chain 5 as it receives the batch, and answers it; the batch fails
// over to s1. Before: s0's 50 answers were relayed to the client.
func TestBatch_AnswersFromAnEndpointFoundOnTheWrongChainMidBatchAreNotTaken(t *testing.T) {
	t.Parallel()
	var eng atomic.Pointer[engine.Engine]
	var held atomic.Int64
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if held.Add(1) == 1 {
			eng.Load().Exclude("s0", engine.ExcludeWrongChain, "on chain id 0x5 (5), pool is on 0x1 (1)")
		}
		return false // s0 answers it all the same
	}, nil)
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), nil)
	eng.Store(h2.eng)
	before := h.sims[1].Counters()
	const n = 50
	r := h2.post(balanceBatch(n, strconv.Itoa))
	decodeBatch(t, r, n)
	if held.Load() == 0 || len(h2.endpoint("s0").Exclusions) == 0 {
		t.Fatal("s0 took no batch, or was not excluded: the test exercises nothing")
	}
	if r.endpoint != "s1" {
		t.Errorf("the batch answered by %q after %d attempts, s0 found on the wrong chain while it held it (s1 heard %d requests); want s1",
			r.endpoint, r.attempts, h.sims[1].Counters().HTTP-before.HTTP)
	}
}
