package engine_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// slowHugeUpstream answers at once with a small result until huge is set,
// then, after delay, with a JSON-RPC result of about size bytes, as a node
// answers a big trace: the answer takes its time to build. asked counts
// the requests made while huge.
func slowHugeUpstream(t *testing.T, huge *atomic.Bool, delay time.Duration, size int, asked *atomic.Int64) string {
	t.Helper()
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":"0x` + strings.Repeat("f", size) + `"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !huge.Load() {
			var req struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":"0x"}`))
			return
		}
		asked.Add(1)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// An answer over server.max_response_bytes is the request's size, not a
// passing trouble: asking the same endpoint again gets the same answer at
// the same cost to it. Seen against geth: a debug_traceCall answered
// 36.7 MB in 2 s directly; through rpcdash with two endpoints it was asked
// 4 times (each endpoint twice) and failed after 5.5 s. Each endpoint is
// asked once.
func TestUpstreamBound_TooBigIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	var askedA, askedB atomic.Int64
	var huge atomic.Bool
	a := slowHugeUpstream(t, &huge, 800*time.Millisecond, 2<<20, &askedA)
	b := slowHugeUpstream(t, &huge, 1200*time.Millisecond, 2<<20, &askedB)
	h := newHarness(t, func(c *engine.Config) {
		c.Server.MaxResponseBytes = 1 << 20
		c.Breaker.Failures = 100
		c.Endpoints = []engine.EndpointConfig{
			{Name: "a", URL: a, Provider: "p0", Region: "r0"},
			{Name: "b", URL: b, Provider: "p1", Region: "r1"},
		}
	})
	// Fast answers first, from each endpoint, so that an attempt's
	// deadline is its floor (breaker.attempt_timeout_min, 250 ms): the
	// big answer then comes after the other endpoint was asked beside it.
	for _, drain := range []string{"b", "a"} {
		h.adminDo("POST", "/v1/endpoints/"+drain+"/drain", "")
		for i := range 30 {
			mustOK(t, h.call(i, "eth_call", map[string]any{}, "latest"))
		}
		h.adminDo("POST", "/v1/endpoints/"+drain+"/undrain", "")
	}
	huge.Store(true)
	r := h.call(1, "eth_call", map[string]any{}, "latest")
	if e := r.rpcError(); e == nil || !strings.Contains(e["message"].(string), "server.max_response_bytes") {
		t.Fatalf("HTTP %d %.300s: want an error naming server.max_response_bytes", r.status, r.body)
	}
	if na, nb := askedA.Load(), askedB.Load(); na != 1 || nb != 1 {
		t.Errorf("a asked %d times, b %d times, want 1 each (attempts %d, %s)", na, nb, r.attempts, bytes.TrimSpace(r.body))
	}
}
