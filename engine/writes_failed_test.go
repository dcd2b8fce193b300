package engine_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
)

// A write that fails after it was sent (the endpoint read it, then broke
// the connection, or answered an HTTP error: a gateway's 502) may have been
// carried out. It was answered -32603 "all 1 attempts failed; last: a:
// EOF", which said nothing of it, and -32603 is what viem retries on its
// own: the transaction sent again. It is answered as a write past its
// deadline is: -32000, naming the endpoint that may have carried it out.
func TestWrites_FailedAfterItWasSentSaysItMayHaveBeenCarriedOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fail func(w http.ResponseWriter)
	}{
		{"connection closed", func(w http.ResponseWriter) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		}},
		{"HTTP 502", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html><title>502 Bad Gateway</title></html>")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var writes atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if !strings.Contains(string(body), "eth_sendRawTransaction") {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`)
					return
				}
				writes.Add(1)
				tc.fail(w)
			}))
			t.Cleanup(srv.Close)
			h := newHarness(t, func(c *engine.Config) {
				c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: srv.URL, Provider: "p", Region: "r"}}
			})
			r := h.call(1, "eth_sendRawTransaction", "0x01")
			e := r.rpcError()
			msg, _ := e["message"].(string)
			if e == nil || e["code"] != float64(-32000) || !strings.Contains(msg, "sent to a, which may have carried it out: check before sending it again") {
				t.Fatalf("%s; want -32000 saying a may have carried it out", r.body)
			}
			if n := writes.Load(); n != 1 {
				t.Fatalf("the write reached the endpoint %d times, want once", n)
			}
			t.Logf("%s", msg)
		})
	}
}

// A write that no endpoint carried out (a connection refused, an HTTP 503
// with a Retry-After: turned away unrun) says so: it is safe to send
// again. It said only "all 2 attempts failed; last: …", the words of a
// read's failure (and, for a 503 after 96865e9, that the endpoint may have
// carried it out).
func TestWrites_ThatNoEndpointCarriedOutSaysItIsSafeToSendAgain(t *testing.T) {
	t.Parallel()
	// Below the ephemeral range, so that no parallel test's listener is
	// given the port meanwhile (one was, in CI: the write went to it and
	// timed out).
	closed := "http://" + testutil.FreeAddrs(t, 1)[0] // nothing listens there
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if !strings.Contains(string(body), "eth_sendRawTransaction") {
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`)
			return
		}
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"too many requests"}}`)
	}))
	t.Cleanup(busy.Close)
	for _, tc := range []struct{ name, url string }{{"refused", closed}, {"503 with Retry-After", busy.URL}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) {
				c.Endpoints = []engine.EndpointConfig{
					{Name: "dead", URL: "http://127.0.0.1:1", Provider: "p0", Region: "r0"},
					{Name: "other", URL: tc.url, Provider: "p1", Region: "r1"},
				}
			})
			r := h.call(1, "eth_sendRawTransaction", "0x01") // to dead first (cold rotation), refused, then other
			if r.attempts != 2 {
				t.Fatalf("%d attempts, want 2: dead refused, then other", r.attempts)
			}
			e := r.rpcError()
			msg, _ := e["message"].(string)
			if e == nil || e["code"] != float64(-32603) || !strings.Contains(msg, "no endpoint carried it out: it is safe to send again") {
				t.Fatalf("%s; want -32603 saying no endpoint carried it out and it is safe to send again", r.body)
			}
			t.Logf("%s", msg)
		})
	}
}
