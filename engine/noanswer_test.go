package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
)

// A request no endpoint answered is answered -32603, the internal error:
// the server failed, not the request. With -32000 viem raises
// InvalidInputRpcError ("Missing or invalid parameters") and never retries,
// where talking to the node directly it retries the HTTP 5xx or the refused
// connection and rides through a short outage. A filter rpcdash cannot poll
// stays -32000, geth's "filter not found", on which viem creates a new one.
func TestAnswers_NoEndpointAnsweredIsTheInternalError(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	code := func(r reply) float64 {
		t.Helper()
		e := r.rpcError()
		if e == nil {
			t.Fatalf("want an error, got HTTP %d %s", r.status, r.body)
		}
		c, _ := e["code"].(float64)
		return c
	}
	for _, s := range h.sims {
		s.SetMode(sim.ModeError)
	}
	if c := code(h.call(1, "eth_getBalance", addr, "latest")); c != -32603 {
		t.Errorf("every attempt failed: code %v, want -32603", c)
	}
	// A batch element no endpoint answered says the same in its place.
	r := h.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + addr + `","latest"]}]`)
	var batch []struct {
		Error struct {
			Code float64 `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &batch); err != nil || len(batch) != 1 || batch[0].Error.Code != -32603 {
		t.Errorf("batch element no endpoint answered: %s, want code -32603", r.body)
	}
	for _, s := range h.sims {
		s.SetMode(sim.ModeNormal)
	}
	for _, n := range []string{"s0", "s1"} {
		h.adminDo("POST", "/v1/endpoints/"+n+"/drain", "")
	}
	if c := code(h.call(2, "eth_getBalance", addr, "latest")); c != -32603 {
		t.Errorf("no routable endpoint: code %v, want -32603", c)
	}
	if c := code(h.call(3, "eth_getFilterChanges", "0x1234")); c != -32000 {
		t.Errorf("unknown filter: code %v, want geth's -32000", c)
	}
}
