package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// frontOf puts a server in front of u: batches go to batch, singles pass.
func frontOf(t *testing.T, u *sim.Upstream, batch func(w http.ResponseWriter, r *http.Request, body []byte) bool, singles *atomic.Int64) *httptest.Server {
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.HasPrefix(body, []byte("[")) && batch(w, r, body) {
			return
		}
		if !bytes.HasPrefix(body, []byte("[")) && singles != nil {
			singles.Add(1)
		}
		relay(w, u.URL(), body)
	}))
	t.Cleanup(front.Close)
	return front
}

// relay is a test front's pass-through: body posted to url, its answer
// written to w (502 when url cannot be reached).
func relay(w http.ResponseWriter, url string, body []byte) {
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// holdFor holds r's answer for d, or until its client goes; true when the
// client went.
func holdFor(r *http.Request, d time.Duration) (gone bool) {
	select {
	case <-r.Context().Done():
		return true
	case <-time.After(d):
		return false
	}
}

// An endpoint that hangs on upstream batches (and answers single calls at
// once) was sent every client batch: the batch's timeout was charged
// nowhere, and each client batch waited out the attempt deadline before
// its elements ran alone. After one such failure it takes no upstream
// batch for breaker.cooldown: the next client batches go elsewhere at
// once.
func TestBatch_AnEndpointThatFailsABatchTakesNoMoreForAWhile(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var batches atomic.Int64
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		batches.Add(1)
		holdFor(r, 5*time.Second)
		return true
	}, nil)
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), nil)
	for k := range 6 {
		r := h2.post(balanceBatch(10, strconv.Itoa))
		decodeBatch(t, r, 10)
		t.Logf("batch %d took %v, answered by %s; upstream batches to s0 so far: %d", k, r.took.Round(time.Millisecond), r.endpoint, batches.Load())
		if k > 0 && r.took > 200*time.Millisecond {
			t.Errorf("client batch %d took %v: it waited on the endpoint that hung on the last upstream batch", k, r.took)
		}
	}
	if n := batches.Load(); n != 1 {
		t.Errorf("s0, which hangs on batches, was sent %d upstream batches, want 1 (then none for breaker.cooldown)", n)
	}
}

// An upstream batch answered 429 as a whole: its elements, sent again
// alone at once, each went to the same rate-limited endpoint (22 more
// requests for a batch of 50; a direct client sends none). The 429 backs
// the whole endpoint off, and they go elsewhere.
func TestBatch_A429ToAnUpstreamBatchBacksTheEndpointOff(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var limited atomic.Bool
	var during atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.HasPrefix(body, []byte("[")) {
			limited.Store(true)
		}
		if limited.Load() {
			during.Add(1)
			w.Header().Set("Retry-After", "10")
			w.WriteHeader(429)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"rate limited"}}`))
			return
		}
		resp, _ := http.Post(h.sims[0].URL(), "application/json", bytes.NewReader(body))
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		w.Write(answer)
	}))
	t.Cleanup(front.Close)
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), nil)
	const n = 50
	r := h2.post(balanceBatch(n, strconv.Itoa))
	for i, a := range decodeBatch(t, r, n) {
		if a.Error != nil || a.Result == "" {
			t.Fatalf("element %d: %+v", i, a)
		}
	}
	if after := during.Load() - 1; after != 0 {
		t.Errorf("the rate-limited endpoint got %d requests after its 429, want 0 (a direct client would send none)", after)
	}
	if off := h2.endpoint("s0").BackoffUntil; off.IsZero() {
		t.Errorf("s0 answered an upstream batch 429 and is not backing off")
	}
}

// An element's answer in an upstream batch is held to what its own race
// would relay (setAside): isBlockhashValid false from an endpoint behind,
// of a blockhash just read from another, is not relayed (a client would
// drop a valid transaction), as on the single path
// (TestSolana_BlockhashReadsFromAnEndpointBehindAreSetAside).
func TestBatch_ABlockhashFalseFromAnEndpointBehindIsNotRelayed(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	r.sims[1].SetHeadLag(3)
	r.probeAll()
	bh := confirmedBlockhash(t, r.sims[0])
	el := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"isBlockhashValid","params":[%q,{"commitment":"confirmed"}]}`, id, bh)
	}
	for i := range 8 {
		before := r.sims[1].MethodCount("isBlockhashValid")
		rep := r.post("[" + el(1) + "," + el(2) + "]")
		if r.sims[1].MethodCount("isBlockhashValid") > before {
			var as []json.RawMessage
			json.Unmarshal(rep.body, &as)
			t.Logf("batch %d asked s1 (3 slots behind): endpoints %s attempts %d: %s", i, rep.endpoint, rep.attempts, rep.body)
			if strings.Contains(string(rep.body), `"value":false`) {
				t.Fatalf("a fresh blockhash answered invalid in a batch (single path sets s1's false aside): %s", rep.body)
			}
			return
		}
	}
	t.Fatal("s1 was never sent a batch in 8: the test exercises nothing")
}

// eth_blockNumber from an endpoint 10 blocks behind (past
// chain.max_head_lag, not yet found out) is not relayed from an upstream
// batch, as on the single path (TestHeadAside_LaggingHeadAnswerIsSetAside).
func TestBatch_ALaggingHeadInAnUpstreamBatchIsNotRelayed(t *testing.T) {
	r := laggingRig(t)
	el := `{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber","params":[]}`
	for range 8 {
		before := r.sims[1].MethodCount("eth_blockNumber")
		rep := r.post("[" + fmt.Sprintf(el, 1) + "," + fmt.Sprintf(el, 2) + "]")
		if r.sims[1].MethodCount("eth_blockNumber") > before {
			var as []struct{ Result string }
			json.Unmarshal(rep.body, &as)
			t.Logf("real head %d (0x%x), s1 head %d; batch answered by %s: %s", r.realHead(), r.realHead(), r.sims[1].Head(), rep.endpoint, rep.body)
			for _, a := range as {
				v, _ := strconv.ParseInt(strings.TrimPrefix(a.Result, "0x"), 16, 64)
				if r.realHead()-v > 5 {
					t.Fatalf("head %d relayed, %d behind the real head (max_head_lag 5)", v, r.realHead()-v)
				}
			}
			return
		}
	}
	t.Fatal("s1 was never sent a batch in 8: the test exercises nothing")
}

// An upstream batch is ranked with its highest block. When that block is
// beyond the pool head (an indexer polling head+1) the exclusion of the
// endpoints behind it was off for the whole batch, and one 3 blocks behind
// answered null for a block the pool has. A block beyond the pool head now
// runs alone; the others keep their exclusion.
func TestBatch_ABlockBeyondThePoolHeadLeavesTheOthersExclusion(t *testing.T) {
	r := oneThreeBlocksBehind(t)
	el := blockByNumber
	for range 8 {
		top := r.realHead()
		before := r.sims[1].MethodCount("eth_getBlockByNumber")
		rep := r.post("[" + fmt.Sprintf(el, 1, top-1) + "," + fmt.Sprintf(el, 2, top+1) + "]")
		if r.sims[1].MethodCount("eth_getBlockByNumber") > before {
			var as []struct{ Result json.RawMessage }
			json.Unmarshal(rep.body, &as)
			t.Logf("head %d, s1 head %d; answered by %s attempts %d", top, r.sims[1].Head(), rep.endpoint, rep.attempts)
			if string(as[0].Result) == "null" {
				t.Fatalf("block %d (the pool has it) answered null: %.200s", top-1, rep.body)
			}
			return
		}
	}
	t.Fatal("s1 was never sent anything in 8: the test exercises nothing")
}

// The same reads alone, or a batch without head+1, never answer null.
func TestBatch_BlocksThePoolHasAreNeverNullAloneOrInABatch(t *testing.T) {
	r := oneThreeBlocksBehind(t)
	el := blockByNumber
	for i := range 8 {
		top := r.realHead()
		rep := r.post(fmt.Sprintf(el, i, top-1))
		if strings.Contains(string(rep.body), `"result":null`) {
			t.Fatalf("single: null from %s", rep.endpoint)
		}
		rep = r.post("[" + fmt.Sprintf(el, 1, top-1) + "," + fmt.Sprintf(el, 2, top-2) + "]")
		if strings.Contains(string(rep.body), `"result":null`) {
			t.Fatalf("batch without head+1: null from %s", rep.endpoint)
		}
	}
}

// blockByNumber is an eth_getBlockByNumber element: id, block number.
const blockByNumber = `{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["0x%x",false]}`

// oneThreeBlocksBehind is two endpoints, s1 three blocks behind s0 and
// known to be (probed), with head lag costing nothing in the score.
func oneThreeBlocksBehind(t *testing.T) *headRig {
	r := newHeadRig(t, 2, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	r.sims[1].SetHeadLag(3)
	r.probeAll()
	return r
}
