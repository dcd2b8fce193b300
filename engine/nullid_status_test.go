package engine_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A provider refusing a bad key answers HTTP 401 or 403 with a JSON-RPC
// error whose id is null (or a 200 with one). It was "answer carries
// another request's id": the status and the provider's words, which tell
// the operator the key is bad and which a direct client reads, were lost.
func TestAnswers_ARefusalWithANullIDIsNamedByItsStatusAndWords(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   string
	}{
		{http.StatusUnauthorized, "HTTP 401: JSON-RPC error -32001: invalid API key"},
		{http.StatusForbidden, "HTTP 403: JSON-RPC error -32001: invalid API key"},
		{http.StatusOK, "answer with a null id: JSON-RPC error -32001: invalid API key"},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"invalid API key"}}`))
			}))
			t.Cleanup(refusing.Close)
			h := newHarness(t, func(c *engine.Config) {
				c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "keyed", URL: refusing.URL, Provider: "pk"})
			}, sim.Config{Latency: fixed(100 * time.Millisecond)})
			// keyed answers at once, s0 in 100 ms: keyed is asked first
			// until its failures rank it behind.
			for i := range 3 {
				mustOK(t, h.call(i, "eth_blockNumber"))
			}
			got := h.endpoint("keyed").LastError
			if !strings.Contains(got, tc.want) || strings.Contains(got, "another request") {
				t.Fatalf("keyed's last error %q, want it to say %q", got, tc.want)
			}
			t.Logf("keyed: %s", got)
		})
	}
}
