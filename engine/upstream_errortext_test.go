package engine_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// An answer whose header Go's client cannot parse fails with an error that
// names the fault (Go's own words, the URL left out), not only the tail of
// the upstream's broken line: that tail is the upstream's to write, and
// alone it says nothing of what went wrong.
func TestUpstreamBound_BrokenHeaderErrorNamesTheFault(t *testing.T) {
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nX-Evil: \x1b[2Jall good: nothing to see\r\nContent-Length: 2\r\n\r\n{}")
		buf.Flush()
	}))
	defer broken.Close()
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Failures = 100
		c.Endpoints = []engine.EndpointConfig{{Name: "broken", URL: broken.URL}}
	})
	r := h.call(1, "eth_getLogs", map[string]any{})
	e := r.rpcError()
	if e == nil {
		t.Fatalf("%s: want an error", r.body)
	}
	msg := e["message"].(string)
	if !strings.Contains(msg, "malformed MIME header") || strings.Contains(msg, "\x1b") || strings.Contains(msg, broken.URL) {
		t.Fatalf("client error %q: want Go's words for a malformed header, sanitised, without the URL", msg)
	}
	if last := h.endpoint("broken").LastError; !strings.Contains(last, "malformed MIME header") {
		t.Fatalf("last_error %q: want it to name the malformed header", last)
	}
}
