package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
		_, err := bench.Run(context.Background(), bench.Load{URL: u, Method: "eth_blockNumber", Rate: 1, Duration: time.Second})
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
		Rate: 1000, Duration: time.Second, Count: n, Timeout: 5 * time.Second})
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
		case q.ID%5 == 0:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":3,"message":"execution reverted"}}`, q.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":"0x1","error":null}`, q.ID)
		}
	}))
	defer srv.Close()

	res, err := bench.Run(context.Background(), bench.Load{URL: srv.URL, Method: "eth_getBalance",
		Params: json.RawMessage(`["0xaa","latest"]`), Rate: 2000, Duration: time.Second, Count: 20})
	if err != nil {
		t.Fatal(err)
	}
	rep := bench.Summarize("x", res)
	// ids 0,5,10,15 carry JSON-RPC errors, 7 an HTTP 500; 0,4,8,12,16 hedged.
	want := bench.Report{Requests: 20, Planned: 20, OK: 15, Errors: 5, Attempts: 25, HedgeShare: 0.25, Amplification: 1.25}
	if rep.Requests != want.Requests || rep.Planned != want.Planned || rep.OK != want.OK || rep.Errors != want.Errors ||
		rep.Incomplete != 0 || rep.Attempts != want.Attempts || rep.HedgeShare != want.HedgeShare || rep.Amplification != want.Amplification {
		t.Fatalf("got %+v, want %+v", rep, want)
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
		Rate: 1000, Duration: time.Second, Count: 5, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rep := bench.Summarize("x", res)
	if rep.Incomplete != 1 || rep.OK != 4 || res.Samples[3].Err == "" {
		t.Fatalf("want request 3 incomplete, got %+v", rep)
	}
	if res.Samples[3].Latency < 500*time.Millisecond {
		t.Fatalf("timed-out request latency %s is below its timeout", res.Samples[3].Latency)
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

	res, err := bench.Run(ctx, bench.Load{URL: srv.URL, Method: "eth_blockNumber", Rate: 10, Duration: 10 * time.Second})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Planned != 100 || len(res.Samples) >= 100 || len(res.Samples) == 0 {
		t.Fatalf("planned %d, sent %d: want the run cut short", res.Planned, len(res.Samples))
	}
}
