package engine_test

import (
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A PUT or DELETE from a script needs no Content-Type: a page can send
// neither cross-site without a CORS preflight, which the Origin check
// refuses. `curl -X DELETE …/fault` and a Go client's bare DELETE were
// refused with a 415 that guarded nothing. A POST still needs it.
func TestAdmin_PutAndDeleteNeedNoContentType(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = true }, sim.Config{Latency: fixed(0)})
	json := map[string]string{"Content-Type": "application/json"}
	if code, body := h.send("POST", h.admin+"/v1/endpoints/s0/fault", `{"mode":"error"}`, json); code != 200 {
		t.Fatalf("fault: HTTP %d %s", code, body)
	}
	if code, body := h.send("DELETE", h.admin+"/v1/endpoints/s0/fault", "", nil); code != 200 {
		t.Errorf("DELETE of the fault without Content-Type: HTTP %d %s; want 200", code, body)
	}
	// curl -X PUT -d sends a form's Content-Type.
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if code, body := h.send("PUT", h.admin+"/v1/hedge", `{"enabled":false}`, form); code != 200 {
		t.Errorf("PUT /v1/hedge as curl -d sends it: HTTP %d %s; want 200", code, body)
	}
	s := h.status()
	if s.Endpoints[0].Fault != nil || s.Hedge.Enabled {
		t.Errorf("fault %+v, hedging %v: want the fault cleared and hedging off", s.Endpoints[0].Fault, s.Hedge.Enabled)
	}
	if code, body := h.send("POST", h.admin+"/v1/endpoints/s0/drain", "", nil); code != 415 {
		t.Errorf("POST drain without Content-Type: HTTP %d %s; want 415", code, body)
	}
	if h.status().Endpoints[0].Drained {
		t.Error("a refused POST drained the endpoint")
	}
}
