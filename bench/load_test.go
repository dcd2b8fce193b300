package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

type rpcReq struct {
	ID     int             `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func decode(t testing.TB, r *http.Request) rpcReq {
	var q rpcReq
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		t.Errorf("server: bad request body: %v", err)
	}
	return q
}

func TestRun_RefusesNonLoopbackTargets(t *testing.T) {
	for _, u := range []string{"http://10.0.0.1:8545", "http://example.com", "https://8.8.8.8/", "ftp://127.0.0.1/", "http://[::2]:80"} {
		_, err := bench.Run(context.Background(), bench.Load{URL: u, Method: "eth_blockNumber", Workload: bench.Workload{Rate: 1, Duration: time.Second}})
		if err == nil || !strings.Contains(err.Error(), "bench:") {
			t.Errorf("%s: want a refusal, got %v", u, err)
		}
	}
}

// A server that answers nothing until every request has arrived: a
// closed-loop client would deadlock here, an open-loop one sends on
// schedule, and each latency counts from its own scheduled send.
func TestRun_SendsOnScheduleWhateverTheAnswers(t *testing.T) {
	const n = 20
	var arrived atomic.Int32
	allIn := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := decode(t, r)
		if arrived.Add(1) == n {
			close(allIn)
		}
		select {
		case <-allIn:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":"0x1"}`, q.ID)
	}))
	defer srv.Close()

	res, err := bench.Run(context.Background(), bench.Load{URL: srv.URL, Method: "eth_blockNumber",
		Workload: bench.Workload{Rate: 1000, Duration: time.Second, Count: n, Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Samples) != n {
		t.Fatalf("sent %d, want %d", len(res.Samples), n)
	}
	last := res.Samples[n-1].Offset
	for i, s := range res.Samples {
		if !s.OK() {
			t.Fatalf("request %d: %+v", i, s)
		}
		if floor := last - s.Offset; s.Latency < floor {
			t.Errorf("request %d latency %s is below the %s it waited for the last send", i, s.Latency, floor)
		}
	}
}

func TestRun_RecordsHeadersAndErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := decode(t, r)
		if q.Method != "eth_getBalance" || string(q.Params) != `["0xaa","latest"]` {
			t.Errorf("server got method %q params %s", q.Method, q.Params)
		}
		h := w.Header()
		h.Set(bench.HeaderEndpoint, fmt.Sprintf("ep%d", q.ID%2))
		h.Set(bench.HeaderAttempts, "1")
		if q.ID%4 == 0 {
			h.Set(bench.HeaderAttempts, "2")
			h.Set(bench.HeaderHedged, "1")
		}
		switch {
		case q.ID == 7:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"boom"}}`)
		case q.ID == 9:
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, `<html>bad gateway</html>`)
		case q.ID%5 == 0:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":3,"message":"execution reverted"}}`, q.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":"0x1","error":null}`, q.ID)
		}
	}))
	defer srv.Close()

	res, err := bench.Run(context.Background(), bench.Load{URL: srv.URL, Method: "eth_getBalance",
		Params: json.RawMessage(`["0xaa","latest"]`), Workload: bench.Workload{Rate: 2000, Duration: time.Second, Count: 20}})
	if err != nil {
		t.Fatal(err)
	}
	rep := bench.Summarize(bench.Policy{Name: "x"}, res, bench.Workload{}, 0)
	// ids 0,5,10,15 carry JSON-RPC errors, 7 one with HTTP 500, 9 an HTTP
	// 502 without JSON-RPC; 0,4,8,12,16 hedged.
	if rep.Calls.N != 20 || rep.OK != 14 || rep.RPCErrors != 5 || rep.Transport != 1 || rep.Incomplete != 0 ||
		rep.Upstream != 25 || rep.HedgedShare != 0.25 || rep.Amplification != 1.25 || rep.DeadlineMisses != nil {
		t.Fatalf("got %+v", rep)
	}
	if rep.Endpoints["ep0"] != 10 || rep.Endpoints["ep1"] != 10 {
		t.Fatalf("endpoints %v", rep.Endpoints)
	}
	if res.Samples[7].Status != 500 || !res.Samples[5].RPCError || res.Samples[1].RPCError {
		t.Fatalf("samples misclassified: %+v %+v %+v", res.Samples[7], res.Samples[5], res.Samples[1])
	}
}

func TestRun_UnansweredRequestsAreIncomplete(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := decode(t, r); q.ID == 3 {
			<-r.Context().Done() // hang until the client gives up
			return
		}
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"0x1"}`))
	}))
	defer srv.Close()

	res, err := bench.Run(context.Background(), bench.Load{URL: srv.URL, Method: "eth_blockNumber",
		Workload: bench.Workload{Rate: 1000, Duration: time.Second, Count: 5, Timeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	rep := bench.Summarize(bench.Policy{Name: "x"}, res, bench.Workload{}, 100*time.Millisecond)
	if rep.Incomplete != 1 || rep.OK != 4 || res.Samples[3].Outcome() != bench.OutcomeIncomplete || *rep.DeadlineMisses != 1 {
		t.Fatalf("want request 3 incomplete, got %+v", rep)
	}
	if res.Samples[3].Latency < 500*time.Millisecond || rep.Calls.Max < 500 {
		t.Fatalf("timed-out request latency %s (max %v ms) is below its timeout: percentiles must count it", res.Samples[3].Latency, rep.Calls.Max)
	}
}

func TestRun_StopsSendingWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel() // the first arrival ends the run
		w.Write([]byte(`{"jsonrpc":"2.0","id":0,"result":"0x1"}`))
	}))
	defer srv.Close()

	res, err := bench.Run(ctx, bench.Load{URL: srv.URL, Method: "eth_blockNumber", Workload: bench.Workload{Rate: 10, Duration: 10 * time.Second}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Planned != 100 || len(res.Samples) >= 100 || len(res.Samples) == 0 {
		t.Fatalf("planned %d, sent %d: want the run cut short", res.Planned, len(res.Samples))
	}
}

// Open loop: an upstream that stalls for one second holds every request
// that arrives in that second, and each of them records the stall from its
// own scheduled send, while the generator keeps sending on schedule.
func TestRun_RequestsScheduledDuringAStallRecordIt(t *testing.T) {
	const stall = time.Second
	var (
		mu         sync.Mutex
		stallStart time.Time
		held       = map[int]bool{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := decode(t, r)
		mu.Lock()
		now := time.Now()
		end := stallStart.Add(stall)
		inStall := !now.Before(stallStart) && now.Before(end)
		if inStall {
			held[q.ID] = true
		}
		mu.Unlock()
		if inStall {
			select {
			case <-time.After(time.Until(end)):
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":"0x1"}`, q.ID)
	}))
	defer srv.Close()

	var origin time.Time
	res, err := bench.Run(context.Background(), bench.Load{URL: srv.URL, Method: "eth_blockNumber",
		Workload: bench.Workload{Rate: 100, Duration: 1500 * time.Millisecond, Timeout: 5 * time.Second},
		OnStart: func(o time.Time) {
			mu.Lock()
			origin, stallStart = o, o.Add(200*time.Millisecond)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Samples) != 150 {
		t.Fatalf("sent %d of 150", len(res.Samples))
	}
	end := stallStart.Add(stall)
	stalled := 0
	mu.Lock()
	defer mu.Unlock()
	for _, s := range res.Samples {
		if !held[s.Op] {
			continue
		}
		stalled++
		// Its answer left at the stall's end, at the earliest; its latency
		// counts from when it was due, not from when it got through.
		if floor := end.Sub(origin.Add(s.Offset)); s.Latency < floor {
			t.Errorf("request due at %s held by the stall: latency %s, below the %s it waited", s.Offset, s.Latency, floor)
		}
	}
	// 100 requests fall due during the stall; a busy machine may send a few
	// of them late, but an open loop never waits for the stalled answers.
	if stalled < 80 {
		t.Fatalf("only %d requests arrived during the one-second stall, want about 100", stalled)
	}
	rep := bench.Summarize(bench.Policy{Name: "x"}, res, bench.Workload{}, 0)
	if rep.Calls.Max < 990 || rep.Calls.P50 < 200 {
		t.Fatalf("the stall is not in the figures: %+v", rep.Calls)
	}
	t.Logf("%d of 150 requests held by the stall; p50 %.0f ms, p99 %.0f ms, max %.0f ms", stalled, rep.Calls.P50, rep.Calls.P99, rep.Calls.Max)
}

// With Batch, an operation's calls go as one JSON-RPC batch: one HTTP
// request of K calls, each call's sample its own answer's verdict with the
// batch's latency, and the batch's X-Rpcdash-Attempts shared out among
// them (summing to it).
func TestRun_BatchSendsEachOperationAsOneBatch(t *testing.T) {
	const k, ops = 7, 5
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var qs []rpcReq
		if err := json.NewDecoder(r.Body).Decode(&qs); err != nil || len(qs) != k {
			t.Errorf("server: want a batch of %d calls, got %d (%v)", k, len(qs), err)
			w.WriteHeader(400)
			return
		}
		w.Header().Set(bench.HeaderAttempts, "9")
		var b strings.Builder
		b.WriteByte('[')
		for i, q := range qs {
			if i > 0 {
				b.WriteByte(',')
			}
			if i == 2 {
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32000,"message":"nope"}}`, q.ID)
			} else {
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"result":"0x1"}`, q.ID)
			}
		}
		b.WriteByte(']')
		w.Write([]byte(b.String()))
	}))
	defer srv.Close()
	res, err := bench.Run(context.Background(), bench.Load{URL: srv.URL, Method: "eth_getBalance",
		Workload: bench.Workload{Rate: 100, Count: ops, Fanout: bench.Fanout{K: k, Q: k}, Batch: true}})
	if err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != ops || len(res.Samples) != ops*k {
		t.Fatalf("%d HTTP requests, %d samples; want %d and %d", n, len(res.Samples), ops, ops*k)
	}
	attempts := map[int]int{}
	for i, s := range res.Samples {
		attempts[s.Op] += s.Attempts
		first := res.Samples[i-i%k]
		if s.Op != first.Op || s.Latency != first.Latency {
			t.Errorf("sample %d: op %d latency %v, want its batch's: op %d latency %v", i, s.Op, s.Latency, first.Op, first.Latency)
		}
		if wantErr := i%k == 2; s.RPCError != wantErr || (!wantErr && !s.OK()) {
			t.Errorf("sample %d: rpc error %v ok %v (%s)", i, s.RPCError, s.OK(), s.Err)
		}
	}
	for op, n := range attempts {
		if n != 9 {
			t.Errorf("op %d: attempts sum to %d, want the batch's 9", op, n)
		}
	}
}
