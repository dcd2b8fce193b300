package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// fillAnswer is geth's answer to eth_fillTransaction: the transaction with
// its defaults (nonce, gas, fees) filled in, and its RLP encoding.
const fillAnswer = `{"raw":"0x02e5","tx":{"type":"0x2","chainId":"0x539","nonce":"0x7","to":"0x2c2e3309697e08ea1af0609292753bca5dcc0cd5","gas":"0x55b4","maxFeePerGas":"0x3b9aca00","maxPriorityFeePerGas":"0x1","value":"0x0","input":"0x","accessList":[],"v":"0x0","r":"0x0","s":"0x0","hash":"0x01"}}`

// viem's sendTransaction with a local account asks eth_fillTransaction
// (geth's read that fills a transaction's nonce, gas and fees, and changes
// nothing) before it signs. rpcdash did not know the method and sent it
// once, like a write: with the endpoint it went to hung (an operator's
// timeout fault on the endpoint of the pool's latest write, where the
// write affinity sends it), viem waited the whole server.request_timeout,
// 10 s, for each send (131 ms directly to geth). A read, it is raced on the
// next endpoint at the attempt deadline like any other.
func TestFillTransaction_IsAReadRacedPastAHungEndpoint(t *testing.T) {
	t.Parallel()
	var hung atomic.Bool // the first eth_fillTransaction that reaches any endpoint never gets an answer
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var fills atomic.Int64
	node := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		result := `"0x10"`
		if req.Method == "eth_fillTransaction" {
			fills.Add(1)
			if hung.CompareAndSwap(false, true) {
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return
			}
			result = fillAnswer
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	}
	a := httptest.NewServer(http.HandlerFunc(node))
	b := httptest.NewServer(http.HandlerFunc(node))
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Server.RequestTimeout = 3 * time.Second
		c.Endpoints = []engine.EndpointConfig{
			{Name: "a", URL: a.URL, Provider: "p0", Region: "r0"},
			{Name: "b", URL: b.URL, Provider: "p1", Region: "r1"},
		}
	})
	tx := map[string]string{"from": "0x0ed13d7c982c75c8d3bf534f96fb8e0af8a7be55", "to": "0x2c2e3309697e08ea1af0609292753bca5dcc0cd5", "input": "0x"}
	r := h.call(1, "eth_fillTransaction", tx)
	if e := r.rpcError(); e != nil {
		t.Fatalf("eth_fillTransaction failed after %v with %d attempt(s) (upstream saw %d): %s; a direct client of the healthy endpoint has the answer at once",
			r.took.Round(time.Millisecond), r.attempts, fills.Load(), r.body)
	}
	if !strings.Contains(string(r.body), `"nonce":"0x7"`) {
		t.Fatalf("answer %s, want the filled transaction", r.body)
	}
	if r.attempts != 2 {
		t.Fatalf("%d attempts, want 2: the hung one, then the next endpoint beside it", r.attempts)
	}
	t.Logf("answered by %s after %v, %d attempts", r.endpoint, r.took.Round(time.Millisecond), r.attempts)
}

// eth_fillTransaction fills the nonce from the node's pending state, as
// eth_getTransactionCount "pending" does: after a write it goes first to
// the endpoint that took the write and is not hedged, or an endpoint that
// has not seen the write yet hands out the same nonce again.
func TestFillTransaction_FollowsTheWriteAffinity(t *testing.T) {
	t.Parallel()
	var got [2]atomic.Int64
	node := func(i int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(body, &req)
			result := `"0x10"`
			switch req.Method {
			case "eth_fillTransaction":
				got[i].Add(1)
				result = fillAnswer
			case "eth_sendRawTransaction":
				result = `"0x` + strings.Repeat("ab", 32) + `"`
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
		}
	}
	a := httptest.NewServer(node(0))
	b := httptest.NewServer(node(1))
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = true
		c.Hedge.Delay = "1ms"
		c.Hedge.Budget, c.Hedge.BudgetBurst = 1, 1000
		c.Endpoints = []engine.EndpointConfig{
			{Name: "a", URL: a.URL, Provider: "p0", Region: "r0"},
			{Name: "b", URL: b.URL, Provider: "p1", Region: "r1"},
		}
	})
	w := h.call(1, "eth_sendRawTransaction", "0x02f8")
	mustOK(t, w)
	took := w.endpoint
	for i := range 5 {
		r := h.call(2+i, "eth_fillTransaction", map[string]string{"from": "0x0ed13d7c982c75c8d3bf534f96fb8e0af8a7be55"})
		mustOK(t, r)
		if r.endpoint != took || r.hedged {
			t.Fatalf("eth_fillTransaction %d answered by %s (hedged %v); the write went to %s", i, r.endpoint, r.hedged, took)
		}
	}
	t.Logf("write to %s; fills a=%d b=%d", took, got[0].Load(), got[1].Load())
}
