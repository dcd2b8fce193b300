package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
// requests opened a breaker of a healthy pool. Every endpoint is asked
// once, at no cost to its breaker, and the node's answer is relayed as a
// direct client gets it.
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
		if e := r.rpcError(); e == nil || e["code"] != float64(-32600) || r.attempts != 2 {
			t.Fatalf("id %s: %d attempts, HTTP %d %s, want the node's -32600 after each endpoint was asked once", id, r.attempts, r.status, r.body)
		}
	}
	for _, ep := range h.status().Endpoints {
		if ep.Breaker.State != engine.BreakerClosed || ep.Rates.Failures != 0 {
			t.Errorf("%s: breaker %s, %d failures charged for clients' ids", ep.Name, ep.Breaker.State, ep.Rates.Failures)
		}
	}
	mustOK(t, h.call(7, "eth_blockNumber"))
}

// In a pool of nodes that read ids differently, a node refusing the id
// unread is not the last word: geth reads 1.5, and a client talking to it
// directly is answered. The strict node, the faster and ranked first, is
// asked and the read goes on to the lenient one. Before: the strict
// node's -32600 was relayed though the pool could answer.
func TestAnswers_AnIDOneNodeCannotReadIsAnsweredByOneThatCan(t *testing.T) {
	var refused atomic.Int64
	strict := strictIDNode(t)
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		strict.Config.Handler.ServeHTTP(rec, r)
		if strings.Contains(rec.Body.String(), `"id":null`) {
			refused.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(counting.Close)
	lenient := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(body, &req)
		time.Sleep(30 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":"0x10"}`))
	}))
	t.Cleanup(lenient.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{
			{Name: "strict", URL: counting.URL, Provider: "p0"},
			{Name: "geth", URL: lenient.URL, Provider: "p1"},
		}
	})
	for i := range 10 { // strict, the faster, ranked first
		mustOK(t, h.call(i, "eth_blockNumber"))
	}
	for i, id := range []string{"1.5", "-1", "123456789012345678901234567890"} {
		r := h.post(`{"jsonrpc":"2.0","id":` + id + `,"method":"eth_blockNumber"}`)
		if r.rpcError() != nil || !strings.Contains(string(r.body), `"result":"0x10"`) || r.endpoint != "geth" {
			t.Fatalf("id %s (request %d): HTTP %d %s from %q after %d attempts, want geth's result", id, i, r.status, r.body, r.endpoint, r.attempts)
		}
	}
	if refused.Load() == 0 {
		t.Fatal("the strict node was never asked: the case was not set up")
	}
	if ep := h.endpoint("strict"); ep.Breaker.State != engine.BreakerClosed || ep.Rates.Failures != 0 {
		t.Errorf("strict: breaker %s, %d failures charged for clients' ids", ep.Breaker.State, ep.Rates.Failures)
	}
}
