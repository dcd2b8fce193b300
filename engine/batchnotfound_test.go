package engine_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/sim"
)

// A batch of reads whose method no endpoint has (debug_traceTransaction
// on providers without the debug API) is one request to an endpoint
// directly, answered -32601 call by call. Each call the upstream batch
// answered -32601 ran alone, asking every endpoint: 100 calls were 201
// upstream requests, and 200 for each batch after. Now they go on to the
// next endpoint together, and the last one's -32601 is relayed.
func TestBatch_ReadsNotFoundGoOnTogether(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	const n = 100
	for round := range 2 { // the second batch: each endpoint known not to have the method
		reqs0, _ := upstreamHTTP(h.sims)
		r := h.post(onceBatch("debug_traceTransaction", n))
		reqs, _ := upstreamHTTP(h.sims)
		for i, a := range decodeBatch(t, r, n) {
			if string(a.ID) != strconv.Itoa(i) || a.Error == nil || a.Error.Code != jsonrpc.CodeMethodNotFound {
				t.Fatalf("batch %d, answer %d: id %s error %+v, want id %d and -32601", round, i, a.ID, a.Error, i)
			}
		}
		if reqs-reqs0 > 2 {
			t.Errorf("batch %d: the endpoints heard %d requests, want at most 2 (one upstream batch to each)", round, reqs-reqs0)
		}
	}
}
