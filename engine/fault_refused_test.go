package engine_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// The refused fault rehearses the hard failure (the provider is down):
// nothing reaches the endpoint, reads fail over with no client error, its
// breaker opens, and a write, which provably never left, fails over too and
// is delivered once.
func TestFault_RefusedConnectionIsAHardFailureWritesFailOverOnce(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Router.ErrorPenalty = 0 // s0, the fastest, is still tried first until its breaker opens
	}, sim.Config{}, sim.Config{Latency: fixed(5 * time.Millisecond)})
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s0/fault", `{"mode":"refused"}`); code != http.StatusOK {
		t.Fatalf("inject refused: HTTP %d %s", code, body)
	}
	w := h.call(1, "eth_sendRawTransaction", "0x01")
	mustOK(t, w)
	if w.endpoint != "s1" || len(h.sims[1].Submissions()) != 1 || len(h.sims[0].Submissions()) != 0 {
		t.Fatalf("write answered by %q after %d attempts; s0 got %d, s1 %d: want s1, once", w.endpoint, w.attempts,
			len(h.sims[0].Submissions()), len(h.sims[1].Submissions()))
	}
	for i := range 50 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if n := h.sims[0].MethodCount("eth_getBalance"); n != 0 {
		t.Fatalf("%d reads reached the refusing endpoint", n)
	}
	ep := h.endpoint("s0")
	if ep.Breaker.State != engine.BreakerOpen || !strings.Contains(ep.LastError, "injected fault: connection refused") {
		t.Fatalf("s0: breaker %s, last error %q; want open on the refused connections", ep.Breaker.State, ep.LastError)
	}
	t.Logf("write sent once, to s1 (%d attempts); 50 reads, 0 errors; s0's breaker %s: %q", w.attempts, ep.Breaker.State, ep.LastError)
}
