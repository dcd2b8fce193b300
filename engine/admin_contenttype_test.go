package engine_test

import (
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A script needs no Content-Type: a browser sends Origin with every POST,
// PUT and DELETE, and the Origin check refuses a page it does not list
// (browser_test.go). `curl -X POST …/drain`, with no header, and `curl -d`,
// with a form's, were refused with a 415 that guarded nothing, and so were
// `curl -X DELETE …/fault` and a Go client's bare DELETE before them.
func TestAdmin_ScriptsNeedNoContentType(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = true }, sim.Config{Latency: fixed(0)})
	// curl -d sends a form's Content-Type.
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if code, body := h.send("POST", h.admin+"/v1/endpoints/s0/fault", `{"mode":"error"}`, form); code != 200 {
		t.Fatalf("POST fault as curl -d sends it: HTTP %d %s; want 200", code, body)
	}
	if f := h.status().Endpoints[0].Fault; f == nil || f.Mode != "error" {
		t.Fatalf("fault after the POST: %+v; want mode error", f)
	}
	if code, body := h.send("DELETE", h.admin+"/v1/endpoints/s0/fault", "", nil); code != 200 {
		t.Errorf("DELETE of the fault without Content-Type: HTTP %d %s; want 200", code, body)
	}
	if code, body := h.send("PUT", h.admin+"/v1/hedge", `{"enabled":false}`, form); code != 200 {
		t.Errorf("PUT /v1/hedge as curl -d sends it: HTTP %d %s; want 200", code, body)
	}
	if code, body := h.send("POST", h.admin+"/v1/endpoints/s0/drain", "", nil); code != 200 {
		t.Errorf("POST drain without Content-Type: HTTP %d %s; want 200", code, body)
	}
	s := h.status()
	if s.Endpoints[0].Fault != nil || s.Hedge.Enabled || !s.Endpoints[0].Drained {
		t.Errorf("fault %+v, hedging %v, drained %v: want the fault cleared, hedging off, s0 drained",
			s.Endpoints[0].Fault, s.Hedge.Enabled, s.Endpoints[0].Drained)
	}
	// A body that is not JSON is still told so, whatever its type.
	if code, body := h.send("POST", h.admin+"/v1/endpoints/s0/fault", `mode=error`, form); code != 400 {
		t.Errorf("POST fault with a form body: HTTP %d %s; want 400", code, body)
	}
}
