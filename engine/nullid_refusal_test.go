package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// strictIDNode reads ids as jsonrpsee (reth) and jsonrpc-core (Solana)
// do: null, a string or a whole number that fits a u64; any other id is
// answered -32600 with a null id, as JSON-RPC 2.0 says when the id could
// not be read.
func strictIDNode(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		id := string(req.ID)
		if _, err := strconv.ParseUint(id, 10, 64); err != nil && id != "null" && (id == "" || id[0] != '"') {
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}`))
			return
		}
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":"0x10"}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A client's id that a node cannot read (1.5, -1, a number past 64 bits)
// got a null-id -32600 answer, which rpcdash took for another request's
// answer: the client got -32603 "answer carries another request's id"
// after every endpoint was tried, and each was charged, so that six such
// requests opened a breaker of a healthy pool. The node's answer is the
// request's: relayed as a direct client gets it, once, charging no one.
func TestAnswers_NullIDRefusalIsTheRequestsNotAnotherRequests(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{
			{Name: "r0", URL: strictIDNode(t).URL, Provider: "p0"},
			{Name: "r1", URL: strictIDNode(t).URL, Provider: "p1"},
		}
	})
	for i := range 10 {
		id := []string{"1.5", "-1", "123456789012345678901234567890", "1.0", "1e2"}[i%5]
		r := h.post(`{"jsonrpc":"2.0","id":` + id + `,"method":"eth_blockNumber"}`)
		if e := r.rpcError(); e == nil || e["code"] != float64(-32600) || r.attempts != 1 {
			t.Fatalf("id %s: %d attempts, HTTP %d %s, want the node's -32600 after one attempt", id, r.attempts, r.status, r.body)
		}
	}
	for _, ep := range h.status().Endpoints {
		if ep.Breaker.State != engine.BreakerClosed || ep.Rates.Failures != 0 {
			t.Errorf("%s: breaker %s, %d failures charged for clients' ids", ep.Name, ep.Breaker.State, ep.Rates.Failures)
		}
	}
	mustOK(t, h.call(7, "eth_blockNumber"))
}
