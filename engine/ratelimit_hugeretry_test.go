package engine_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A Retry-After in seconds past what a time.Duration holds (9223372037 s,
// or more digits than an int takes) asks for the longest wait there is:
// it is capped at breaker.backoff_max like a day is, not read as no
// Retry-After at all (breaker.backoff_base, the shortest back-off).
func TestRateLimit_HugeRetryAfterSecondsIsCappedAtBackoffMax(t *testing.T) {
	const capped = 300 * time.Millisecond
	for _, retryAfter := range []string{"9223372037", "99999999999999999999999"} {
		t.Run(retryAfter, func(t *testing.T) {
			var got atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.Add(1)
				w.Header().Set("Retry-After", retryAfter)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"rate limited"}}`)
			}))
			t.Cleanup(srv.Close)
			h := newHarness(t, func(c *engine.Config) {
				takeTurns(c)
				c.Breaker.BackoffBase = 10 * time.Millisecond
				c.Breaker.BackoffMax = capped
				c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "huge", URL: srv.URL, Provider: "ph", Region: "rh"})
			}, sim.Config{})
			before := time.Now()
			for i := 0; i < 20 && got.Load() == 0; i++ {
				mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
			}
			after := time.Now()
			if got.Load() != 1 {
				t.Fatalf("the endpoint got %d requests, want 1", got.Load())
			}
			until := h.endpoint("huge").Methods["eth_getBalance"].BackoffUntil
			if until.Before(before.Add(capped)) || until.After(after.Add(capped)) {
				t.Fatalf("Retry-After %s: methods[eth_getBalance].backoff_until %s after the first call; want %s (backoff_max)", retryAfter, until.Sub(before), capped)
			}
			if evs := h.backoffEvents("huge"); len(evs) != 1 || !containsAll(evs[0], "capped at 300ms") {
				t.Errorf("backoff events %q, want one saying the ask was capped", evs)
			}
		})
	}
}
