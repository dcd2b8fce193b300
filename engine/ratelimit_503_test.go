package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// Every endpoint answers HTTP 503 with Retry-After: 5, a provider saying
// it is overloaded and when to come back. Taken for a failure, each read
// went to every endpoint in turn (3 upstream requests per read, p50 125 ms
// against 42 ms direct, measured with three endpoints) and the client got
// -32603 with no Retry-After. As with a 429, the endpoints now back off
// and the client is told when to come back; a read meets no endpoint
// already backing off but the one panic routing gives it.
func TestRateLimit_A503WithRetryAfterBacksOffAsA429Does(t *testing.T) {
	t.Parallel()
	var reads atomic.Int64
	overloaded := func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage
			Method string
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if req.Method != "eth_getBalance" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, req.ID)
			return
		}
		reads.Add(1)
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"service unavailable"}}`, req.ID)
	}
	var eps []engine.EndpointConfig
	for i := range 2 {
		srv := httptest.NewServer(http.HandlerFunc(overloaded))
		t.Cleanup(srv.Close)
		eps = append(eps, engine.EndpointConfig{Name: fmt.Sprint("e", i), URL: srv.URL, Provider: fmt.Sprint("p", i), Region: fmt.Sprint("r", i)})
	}
	h := newHarness(t, func(c *engine.Config) { c.Endpoints = eps })
	const n = 4
	for i := range n {
		r := h.call(i, "eth_getBalance", addr, "latest")
		if r.status != http.StatusTooManyRequests || r.retry == "" {
			t.Fatalf("read %d: HTTP %d Retry-After %q %s; want 429 with a Retry-After", i, r.status, r.retry, r.body)
		}
	}
	// The first read meets both before either backs off; each later one the
	// endpoint panic routing gives it.
	if got := reads.Load(); got != n+1 {
		t.Fatalf("%d reads cost %d upstream requests, want %d", n, got, n+1)
	}
	for _, ep := range h.status().Endpoints {
		if ep.Breaker.State != engine.BreakerClosed {
			t.Fatalf("%s: breaker %s after 503s with Retry-After; want closed (a back-off, not a failure)", ep.Name, ep.Breaker.State)
		}
	}
}
