package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// balanceBatch is a batch of n eth_getBalance calls with ids from id(i),
// each of its own address.
func balanceBatch(n int, id func(int) string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"method":"eth_getBalance","params":["0x%040x","latest"]}`, id(i), i+1)
	}
	b.WriteByte(']')
	return b.String()
}

// balancesOf asks an endpoint for each address of balanceBatch one by one:
// what each element's answer must carry.
func balancesOf(t *testing.T, url string, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x%040x","latest"]}`, i+1)
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var a struct{ Result string }
		err = json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		if err != nil || a.Result == "" {
			t.Fatalf("balance %d from %s: %v", i, url, err)
		}
		out[i] = a.Result
	}
	return out
}

type upstreamBatchAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result string          `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeBatch(t *testing.T, r reply, n int) []upstreamBatchAnswer {
	t.Helper()
	var as []upstreamBatchAnswer
	if err := json.Unmarshal(r.body, &as); err != nil || len(as) != n {
		t.Fatalf("HTTP %d, %d answers of %d (%v): %.300s", r.status, len(as), n, err, r.body)
	}
	return as
}

// A client's batch of reads goes upstream as one batch, as the client
// would send it directly, and not as one request per element: 1000
// elements were 1000 upstream requests (1130 ms against 85 ms direct to a
// sim), then ten upstream batches of 100 (85 ms against 60 ms: each of
// the ten a latency draw of its own). Every element still gets its own
// answer, in order.
func TestBatch_ReadsGoUpstreamAsBatches(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	const n = 1000
	want := balancesOf(t, h.sims[0].URL(), n)
	before := h.sims[0].Counters()
	r := h.post(balanceBatch(n, strconv.Itoa))
	as := decodeBatch(t, r, n)
	for i, a := range as {
		if string(a.ID) != strconv.Itoa(i) || a.Result != want[i] {
			t.Fatalf("answer %d: id %s result %q, want id %d result %q", i, a.ID, a.Result, i, want[i])
		}
	}
	after := h.sims[0].Counters()
	if http, calls := after.HTTP-before.HTTP, after.Total-before.Total; http != 1 || calls != n {
		t.Fatalf("the endpoint heard %d requests carrying %d calls, want 1 upstream batch carrying %d", http, calls, n)
	}
	if r.attempts != n {
		t.Errorf("%s %d, want %d (one attempt per element)", engine.HeaderAttempts, r.attempts, n)
	}
	if acc := h.endpoint("s0").Accounting; acc.Primary < n {
		t.Errorf("s0 counted %d primary attempts, want at least the batch's %d", acc.Primary, n)
	}
}

// Ids are the client's to choose, and may repeat within a batch: each
// element gets the answer to its own call, with its own id, and they still
// go upstream as one batch, a repeated id under one of rpcdash's own (1000
// calls all with id 1 were 1000 upstream requests, against one direct).
func TestBatch_RepeatedIDsEachGetTheirOwnAnswer(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	const n = 6
	want := balancesOf(t, h.sims[0].URL(), n)
	before := h.sims[0].Counters()
	r := h.post(balanceBatch(n, func(i int) string { return strconv.Itoa(i % 2) })) // ids 0 1 0 1 0 1
	for i, a := range decodeBatch(t, r, n) {
		if string(a.ID) != strconv.Itoa(i%2) || a.Result != want[i] {
			t.Fatalf("answer %d: id %s result %q, want id %d result %q", i, a.ID, a.Result, i%2, want[i])
		}
	}
	after := h.sims[0].Counters()
	if http, calls := after.HTTP-before.HTTP, after.Total-before.Total; http != 1 || calls != n {
		t.Fatalf("the endpoint heard %d requests carrying %d calls, want 1 upstream batch carrying %d", http, calls, n)
	}
}

// Ids in any spelling go upstream together and each call gets its own
// answer with its own id, byte for byte; of ids equal in value (1 and 1.0,
// "a" and "\u0061"), all but the first go under ids of rpcdash's own. Numbers with huge
// exponents cost their length: compared as exact rationals, 40 of them
// held a core for 40 s and every call timed out.
func TestBatch_IDsOfAnySpellingAreCheapAndEachGetsItsAnswer(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	const n = 48
	want := balancesOf(t, h.sims[0].URL(), n)
	id := func(i int) string {
		switch {
		case i < 40:
			return strconv.Itoa(i+1) + "e999999"
		case i%2 == 0:
			return `1.0`
		default:
			return `"\u0061"`
		}
	}
	before := h.sims[0].Counters()
	r := h.post(balanceBatch(n, id))
	for i, a := range decodeBatch(t, r, n) {
		if string(a.ID) != id(i) || a.Result != want[i] {
			t.Fatalf("answer %d: id %s result %q, want id %s result %q", i, a.ID, a.Result, id(i), want[i])
		}
	}
	// 1.0 and "\u0061" come four times each: one upstream batch still.
	after := h.sims[0].Counters()
	if http, calls := after.HTTP-before.HTTP, after.Total-before.Total; http != 1 || calls != n {
		t.Fatalf("the endpoint heard %d requests carrying %d calls, want 1 upstream batch carrying %d", http, calls, n)
	}
}

// What an upstream batch does not answer well runs alone, with failover,
// or fails over as a batch when the whole batch failed: an endpoint that
// refuses batches, one that fails the whole batch (HTTP 500), and one that
// leaves an element out or answers it with its own error. No client sees
// an error a single request would not have.
func TestBatch_WhatAnUpstreamBatchDoesNotAnswerRunsAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		// rewrite turns the sim's answer to an upstream batch into what
		// the endpoint in front says; nil: the sim's own.
		rewrite func(body []byte) (int, []byte)
	}{
		{"batches refused", func([]byte) (int, []byte) {
			return 200, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not allowed"}}`)
		}},
		{"HTTP 500", func([]byte) (int, []byte) { return 500, []byte(`internal error`) }},
		{"an element answered the endpoint's error", func(body []byte) (int, []byte) {
			var parts []json.RawMessage
			_ = json.Unmarshal(body, &parts)
			parts[1] = json.RawMessage(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error: header not found"}}`)
			out, _ := json.Marshal(parts)
			return 200, out
		}},
		{"an element left out", func(body []byte) (int, []byte) {
			var parts []json.RawMessage
			_ = json.Unmarshal(body, &parts)
			out, _ := json.Marshal(parts[:len(parts)-1])
			return 200, out
		}},
		// Ids alone cannot tell an answer to the call that bears its id
		// from one given another call's id: answers in another order than
		// asked are not taken.
		{"answers in another order", func(body []byte) (int, []byte) {
			var parts []json.RawMessage
			_ = json.Unmarshal(body, &parts)
			slices.Reverse(parts)
			out, _ := json.Marshal(parts)
			return 200, out
		}},
		{"each element given its neighbour's id", func(body []byte) (int, []byte) {
			var parts []map[string]json.RawMessage
			_ = json.Unmarshal(body, &parts)
			first := parts[0]["id"]
			for i := range parts[:len(parts)-1] {
				parts[i]["id"] = parts[i+1]["id"]
			}
			parts[len(parts)-1]["id"] = first
			out, _ := json.Marshal(parts)
			return 200, out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) { c.Router.ErrorPenalty = 0 },
				sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
			// s0, the faster, is fronted by a server that rewrites its
			// answers to batches; single calls pass through.
			var batches, singles atomic.Int64
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				resp, err := http.Post(h.sims[0].URL(), "application/json", bytes.NewReader(body))
				if err != nil {
					w.WriteHeader(502)
					return
				}
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				status := resp.StatusCode
				if bytes.HasPrefix(body, []byte("[")) {
					batches.Add(1)
					status, answer = tc.rewrite(answer)
				} else {
					singles.Add(1)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				w.Write(answer)
			}))
			t.Cleanup(front.Close)
			h2 := frontedPair(t, front.URL, h.sims[1].URL(), func(c *engine.Config) { c.Router.ErrorPenalty = 0 })
			const n = 10
			want := balancesOf(t, h.sims[0].URL(), n)
			singlesBefore := singles.Load()
			r := h2.post(balanceBatch(n, strconv.Itoa))
			for i, a := range decodeBatch(t, r, n) {
				if a.Error != nil || a.Result != want[i] || string(a.ID) != strconv.Itoa(i) {
					t.Fatalf("answer %d: %+v, want result %q", i, a, want[i])
				}
			}
			if n := batches.Load(); n != 1 {
				t.Errorf("s0 got %d upstream batches, want the one", n)
			}
			t.Logf("%s: %d elements answered; s0 took %d single calls after its batch, X-Rpcdash-Attempts %d",
				tc.name, n, singles.Load()-singlesBefore, r.attempts)
		})
	}
}

// A 100-read batch through the engine to a sim answering at once: the
// engine's cost of a batch (11 ms a batch when ids were matched pair by
// pair, 2.5 ms with the sim's share).
func BenchmarkBatch_100ReadsThroughTheEngine(b *testing.B) { benchmarkBatch(b, 100) }

func BenchmarkBatch_1000ReadsThroughTheEngine(b *testing.B) { benchmarkBatch(b, 1000) }

// The same 1000-read batch sent straight to the sim: the engine's cost is
// the difference from ThroughTheEngine, measured side by side.
func BenchmarkBatch_1000ReadsDirect(b *testing.B) {
	benchPosts(b, overheadClient(b), zeroLatencySim(b).URL(), balanceBatch(1000, strconv.Itoa))
}

func benchmarkBatch(b *testing.B, n int) {
	h := newHarness(b, nil, sim.Config{Latency: fixed(0)})
	body := balanceBatch(n, strconv.Itoa)
	b.ResetTimer()
	for range b.N {
		if r := h.post(body); r.status != http.StatusOK {
			b.Fatalf("HTTP %d", r.status)
		}
	}
}

// frontedPair is an engine in front of two endpoints, s0 at fast (1 ms:
// a server in front of a sim, which a test makes misbehave) and s1 at slow
// (20 ms), both measured by 20 reads: s0 is the faster.
func frontedPair(t *testing.T, fast, slow string, mut func(*engine.Config)) *harness {
	t.Helper()
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[0].URL, c.Endpoints[1].URL = fast, slow
		if mut != nil {
			mut(c)
		}
	}, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	for i := range 20 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	return h
}
