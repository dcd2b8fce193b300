package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/sim"
)

// onceBatch is a batch of n calls of method, a method in no table, with
// ids 0 … n-1.
func onceBatch(method string, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":["0x%x"]}`, i, method, i)
	}
	b.WriteByte(']')
	return b.String()
}

// upstreamHTTP is how many HTTP requests the sims have heard, and the
// calls they carried.
func upstreamHTTP(sims []*sim.Upstream) (requests, calls int64) {
	for _, u := range sims {
		c := u.Counters()
		requests += c.HTTP
		calls += c.Total
	}
	return requests, calls
}

// A batch of 100 calls of a method in no table is one HTTP request to an
// endpoint directly. Each call was an upstream request of its own, sent
// once: 100 upstream requests for the endpoint's rate limit, and 200 when
// the endpoints do not have the method (each call failed over alone). Now
// they go upstream together: one request to the endpoint that answered
// them, and the calls it does not have go on together to the next.
func TestBatch_UnknownMethodsGoUpstreamTogether(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	const n = 100

	// An L2's own method, served by the endpoints (its answer an error of
	// the request's, relayed as a single call's is).
	answerWith(h.sims, "l2_custom", -32000, "custom answer")
	reqs0, calls0 := upstreamHTTP(h.sims)
	r := h.post(onceBatch("l2_custom", n))
	reqs, calls := upstreamHTTP(h.sims)
	for i, a := range decodeBatch(t, r, n) {
		if string(a.ID) != strconv.Itoa(i) || a.Error == nil || a.Error.Message != "custom answer" {
			t.Fatalf("answer %d: id %s error %+v, want id %d and the endpoint's own answer", i, a.ID, a.Error, i)
		}
	}
	if reqs-reqs0 != 1 || calls-calls0 != n {
		t.Errorf("served method: the endpoints heard %d requests carrying %d calls, want 1 upstream batch of %d (a direct client's one request)", reqs-reqs0, calls-calls0, n)
	}
	if r.attempts != n {
		t.Errorf("served method: %s %d, want %d (each call sent once)", engine.HeaderAttempts, r.attempts, n)
	}

	// A method no endpoint has (-32601): asked of each endpoint once, as a
	// batch, and the last one's answer relayed.
	reqs0, calls0 = upstreamHTTP(h.sims)
	r = h.post(onceBatch("foo_bar", n))
	reqs, calls = upstreamHTTP(h.sims)
	for i, a := range decodeBatch(t, r, n) {
		if string(a.ID) != strconv.Itoa(i) || a.Error == nil || a.Error.Code != jsonrpc.CodeMethodNotFound {
			t.Fatalf("answer %d: id %s error %+v, want id %d and -32601", i, a.ID, a.Error, i)
		}
	}
	if reqs-reqs0 != 2 || calls-calls0 != 2*n {
		t.Errorf("method not found: the endpoints heard %d requests carrying %d calls, want 2 upstream batches (one per endpoint) of %d", reqs-reqs0, calls-calls0, n)
	}
	if r.attempts != 2*n {
		t.Errorf("method not found: %s %d, want %d (each call asked of both endpoints)", engine.HeaderAttempts, r.attempts, 2*n)
	}
	// Both methods count under "other" here: a name no table lists is
	// counted under its own once an endpoint has answered it (methodnames.go).
	if m := h.status().Methods["other"]; m.Requests != 2*n || m.Primary != 2*n || m.Failover != n {
		t.Errorf("counted %d requests, %d primary and %d failover attempts, want %d, %d and %d", m.Requests, m.Primary, m.Failover, 2*n, 2*n, n)
	}
}

// Calls of a method in no table are sent once: an upstream batch of them
// that fails after a connection carried it (HTTP 500) is never sent again,
// as a whole or call by call, and each call is told it may have run.
// Before, each call was its own request: 100 upstream requests, each
// answered HTTP 500.
func TestBatch_UnknownMethodsBatchFailedIsNotSentAgain(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	for _, u := range h.sims {
		u.SetMode(sim.ModeError)
	}
	const n = 100
	reqs0, calls0 := upstreamHTTP(h.sims)
	r := h.post(onceBatch("l2_custom", n))
	reqs, calls := upstreamHTTP(h.sims)
	var as []json.RawMessage
	if err := json.Unmarshal(r.body, &as); err != nil || len(as) != n {
		t.Fatalf("HTTP %d, %d answers (%v): %.300s", r.status, len(as), err, r.body)
	}
	for i, a := range decodeBatch(t, r, n) {
		if string(a.ID) != strconv.Itoa(i) || a.Error == nil || a.Error.Code != jsonrpc.CodeMayHaveRun || !strings.Contains(a.Error.Message, "may have carried it out") {
			t.Fatalf("answer %d: id %s error %+v, want id %d and %d (it may have run)", i, a.ID, a.Error, i, jsonrpc.CodeMayHaveRun)
		}
	}
	if reqs-reqs0 != 1 || calls-calls0 != n {
		t.Errorf("the endpoints heard %d requests carrying %d calls, want the one upstream batch of %d, never sent again", reqs-reqs0, calls-calls0, n)
	}
}

// An endpoint that takes no batches refuses one as a whole with a single
// error object, running none of it: the calls sent once then run one by
// one, each answered, as before upstream batches of them.
func TestBatch_UnknownMethodsRefusedBatchRunOneByOne(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	answerWith(h.sims, "l2_custom", -32000, "custom answer")
	var batches, singles atomic.Int64
	front := simFront(t, h.sims[0], func(w http.ResponseWriter, body []byte) bool {
		if bytes.HasPrefix(body, []byte("[")) {
			batches.Add(1)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not allowed"}}`))
			return true
		}
		singles.Add(1)
		return false
	})
	h2 := frontedPair(t, front, h.sims[1].URL(), nil)
	const n = 10
	singles0 := singles.Load()
	r := h2.post(onceBatch("l2_custom", n))
	for i, a := range decodeBatch(t, r, n) {
		if string(a.ID) != strconv.Itoa(i) || a.Error == nil || a.Error.Message != "custom answer" {
			t.Fatalf("answer %d: id %s error %+v, want id %d and the endpoint's own answer", i, a.ID, a.Error, i)
		}
	}
	if b := batches.Load(); b != 1 {
		t.Errorf("s0 got %d upstream batches, want the one it refused", b)
	}
	t.Logf("s0 took %d single calls after refusing the batch; %s %d", singles.Load()-singles0, engine.HeaderAttempts, r.attempts)
}

// Calls of a method in no table after the batch's first write wait for it
// (batchOrder), and then go upstream together too: a write and 50 such
// calls were 51 upstream requests.
func TestBatch_UnknownMethodsAfterAWriteGoUpstreamTogether(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	answerWith(h.sims, "l2_custom", -32000, "custom answer")
	const n = 50
	body := `[{"jsonrpc":"2.0","id":"w","method":"eth_sendRawTransaction","params":["0x01"]},` + strings.TrimPrefix(onceBatch("l2_custom", n), "[")
	reqs0, _ := upstreamHTTP(h.sims)
	r := h.post(body)
	reqs, _ := upstreamHTTP(h.sims)
	as := decodeBatch(t, r, n+1)
	if as[0].Result == "" {
		t.Fatalf("the write: %+v, want its hash", as[0])
	}
	for i, a := range as[1:] {
		if string(a.ID) != strconv.Itoa(i) || a.Error == nil || a.Error.Message != "custom answer" {
			t.Fatalf("answer %d: id %s error %+v, want id %d and the endpoint's own answer", i, a.ID, a.Error, i)
		}
	}
	if reqs-reqs0 != 2 {
		t.Errorf("the endpoints heard %d requests, want 2: the write, then one upstream batch of the %d calls", reqs-reqs0, n)
	}
}

// A batch of writes is one request to a node directly, which runs them in
// order. Through rpcdash the writes after the first ran at once, one
// upstream request each (100 writes: 100 requests, arriving in any order);
// now they go together, after the first, to its endpoint.
func TestBatch_WritesAfterTheFirstGoUpstreamTogether(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = false },
		sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	const n = 100
	writes := func(id func(int) int) string {
		var b strings.Builder
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"eth_sendRawTransaction","params":["0x%04x"]}`, id(i), i+1)
		}
		b.WriteByte(']')
		return b.String()
	}
	reqs0, _ := upstreamHTTP(h.sims)
	r := h.post(writes(func(i int) int { return i }))
	reqs, _ := upstreamHTTP(h.sims)
	hashes := make([]string, n)
	for i, a := range decodeBatch(t, r, n) {
		if string(a.ID) != strconv.Itoa(i) || a.Error != nil || a.Result == "" {
			t.Fatalf("answer %d: %+v, want id %d and the transaction's hash", i, a, i)
		}
		hashes[i] = a.Result
	}
	if reqs-reqs0 != 2 {
		t.Errorf("the endpoints heard %d requests, want 2: the first write, then one upstream batch of the %d others", reqs-reqs0, n-1)
	}
	if r.endpoint != "s0" && r.endpoint != "s1" {
		t.Errorf("answered by %q: want every write on one endpoint", r.endpoint)
	}

	// Ids are the client's to choose, and may repeat: each write still
	// gets its own answer, and they still go upstream together.
	reqs0, _ = upstreamHTTP(h.sims)
	r = h.post(writes(func(i int) int { return i % 2 }))
	reqs, _ = upstreamHTTP(h.sims)
	for i, a := range decodeBatch(t, r, n) {
		if string(a.ID) != strconv.Itoa(i%2) || a.Result != hashes[i] {
			t.Fatalf("repeated ids, answer %d: %+v, want id %d and hash %s", i, a, i%2, hashes[i])
		}
	}
	if reqs-reqs0 != 2 {
		t.Errorf("repeated ids: the endpoints heard %d requests, want 2", reqs-reqs0)
	}
}

// A single error object in answer to an upstream batch does not say that
// none of it ran: a gateway answers its timeout so after
// passing the batch on, a node its internal error after running some of
// it. Those calls were sent again one by one: 5 calls of a method in no
// table ran 10 times, 4 writes 7 times, and the client never knew. Now
// each is answered as a call sent once that may have run.
// Each batch meets fresh endpoints: an endpoint whose batch failed takes
// none for breaker.cooldown, and writes following their first write to it
// then run one by one, which would leave nothing here to look at.
func TestBatch_CallsOfABatchAnsweredWithOneErrorAreNotSentAgain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"a gateway's timeout", http.StatusOK, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"request timed out"}}`},
		{"an internal error", http.StatusOK, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`},
	} {
		// batchTo is a harness whose endpoints run a batch at their sim, then
		// answer tc's error in its place; single calls pass through.
		batchTo := func(t *testing.T) (*harness, []*sim.Upstream) {
			sims := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)}).sims
			answerWith(sims, "l2_custom", -32000, "custom answer")
			front := func(u *sim.Upstream) string {
				return simFront(t, u, func(w http.ResponseWriter, body []byte) bool {
					if !bytes.HasPrefix(body, []byte("[")) {
						return false
					}
					if resp, err := http.Post(u.URL(), "application/json", bytes.NewReader(body)); err == nil {
						io.Copy(io.Discard, resp.Body) // it ran
						resp.Body.Close()
					}
					w.WriteHeader(tc.status)
					w.Write([]byte(tc.body))
					return true
				})
			}
			h := newHarness(t, func(c *engine.Config) {
				c.Endpoints[0].URL, c.Endpoints[1].URL = front(sims[0]), front(sims[1])
			}, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
			for i := range 10 {
				mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
			}
			return h, sims
		}
		t.Run(tc.name+", methods in no table", func(t *testing.T) {
			t.Parallel()
			h, sims := batchTo(t)
			const n = 5
			_, calls0 := upstreamHTTP(sims)
			r := h.post(onceBatch("l2_custom", n))
			_, calls := upstreamHTTP(sims)
			if calls-calls0 != n {
				t.Errorf("the endpoints ran %d calls of the batch of %d: sent again after %s", calls-calls0, n, tc.name)
			}
			for i, a := range decodeBatch(t, r, n) {
				if a.Error == nil || a.Error.Code != jsonrpc.CodeMayHaveRun || !strings.Contains(a.Error.Message, "may have carried it out") ||
					!strings.Contains(a.Error.Message, "one error for the whole batch: JSON-RPC error") {
					t.Fatalf("answer %d: %+v, want -32000 saying it may have run, after one error for the whole batch", i, a)
				}
			}
		})
		t.Run(tc.name+", writes", func(t *testing.T) {
			t.Parallel()
			h, sims := batchTo(t)
			// The writes after a batch's first go upstream together.
			_, calls0 := upstreamHTTP(sims)
			r := h.post(onceBatch("eth_sendRawTransaction", 4))
			_, calls := upstreamHTTP(sims)
			if calls-calls0 != 4 {
				t.Errorf("the endpoints ran %d writes of the batch of 4: sent again after %s", calls-calls0, tc.name)
			}
			for i, a := range decodeBatch(t, r, 4)[1:] {
				if a.Error == nil || !strings.Contains(a.Error.Message, "may have carried it out") {
					t.Fatalf("write %d: %+v, want -32000 saying it may have run", i+1, a)
				}
			}
		})
	}
}

// A node's batch limit refuses a batch as a whole, running none of it, in
// its own words: Besu's -32005 "Number of requests exceeds max batch size"
// at HTTP 200, or an error of another code naming the batch. Taken for
// one that may have run, a client batch of 4 writes had 3 failed with
// "may have carried it out" and never sent; they run one by one.
func TestBatch_ABatchLimitsRefusalRunsTheCallsOneByOne(t *testing.T) {
	for _, refusal := range []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"Number of requests exceeds max batch size"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"batch size limit exceeded"}}`,
	} {
		t.Run(refusal[44:50], func(t *testing.T) {
			t.Parallel()
			sims := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)}).sims
			front := func(u *sim.Upstream) string {
				return simFront(t, u, func(w http.ResponseWriter, body []byte) bool {
					if bytes.HasPrefix(body, []byte("[")) {
						w.Write([]byte(refusal))
						return true
					}
					return false
				})
			}
			h := newHarness(t, func(c *engine.Config) {
				c.Endpoints[0].URL, c.Endpoints[1].URL = front(sims[0]), front(sims[1])
			}, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
			_, calls0 := upstreamHTTP(sims)
			r := h.post(onceBatch("eth_sendRawTransaction", 4))
			_, calls := upstreamHTTP(sims)
			for i, a := range decodeBatch(t, r, 4) {
				if a.Error != nil || a.Result == "" {
					t.Fatalf("write %d: %+v, want its hash", i, a)
				}
			}
			if calls-calls0 != 4 {
				t.Errorf("the endpoints ran %d writes of the batch of 4, want each once", calls-calls0)
			}
		})
	}
}
