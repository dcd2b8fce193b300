package engine_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A filter call cut by its deadline after it reached its endpoint may have
// been carried out there: a poll's changes taken (a poll retried returns
// only what came after), a filter created whose id never came back. It is
// answered as a write is, -32000 saying so and what to do, not -32603,
// which viem retries on its own (and shutdown already answered such a cut
// so). A read cut alike stays -32603: sending it again is safe.
func TestFilters_ACallCutAfterItWasSentSaysItMayHaveRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) { c.Server.RequestTimeout = 400 * time.Millisecond }, sim.Config{Latency: fixed(0)})
	r := h.call(1, "eth_newFilter", map[string]any{"fromBlock": "latest"})
	mustOK(t, r)
	var id string
	json.Unmarshal([]byte(resultString(t, r)), &id)

	h.sims[0].SetMode(sim.ModeHang)
	for _, c := range []struct {
		method string
		params []any
	}{{"eth_getFilterChanges", []any{id}}, {"eth_newBlockFilter", nil}} {
		r := h.call(2, c.method, c.params...)
		e := r.rpcError()
		msg, _ := e["message"].(string)
		if e == nil || e["code"] != float64(-32000) || !strings.HasPrefix(msg, "request timed out: no answer within server.request_timeout 400ms") ||
			!strings.Contains(msg, "; it was sent to s0, which may have carried it out (") || !strings.Contains(msg, "eth_getLogs") {
			t.Errorf("%s cut at its deadline after it was sent: HTTP %d %s", c.method, r.status, r.body)
		}
	}
	r = h.call(3, "eth_getBalance", addr, "latest")
	if e := r.rpcError(); e == nil || e["code"] != float64(-32603) || strings.Contains(string(r.body), "may have carried it out") {
		t.Errorf("a read cut alike: HTTP %d %s", r.status, r.body)
	}
}
