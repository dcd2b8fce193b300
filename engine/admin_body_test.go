package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An admin body over the API's 1 MiB is a 413 naming the limit, and changes
// nothing: the body was cut at the limit and what was left of it decoded,
// so 1 MiB of spaces after {"enabled":false} hid what followed it (another
// object, garbage) and the call was applied.
func TestAdminBody_OverTheLimitIs413(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = true }, sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)})
	padding := strings.Repeat(" ", 1<<20)
	cases := []struct{ method, path, body string }{
		{"PUT", "/v1/hedge", `{"enabled":false}` + padding + `{"enabled":true} garbage`},
		{"POST", "/v1/endpoints/s0/fault", `{"mode":"error"}` + padding + `garbage`},
		{"PUT", "/v1/endpoints/s1/role", `{"role":"standby"}` + padding + `garbage`},
		{"POST", "/v1/endpoints/s0/drain", `{}` + padding + `garbage`},
	}
	for _, c := range cases {
		code, b := h.adminDo(c.method, c.path, c.body)
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if code != 413 || !strings.HasPrefix(e.Error, "request body:") || !strings.Contains(e.Error, "1048576 bytes") {
			t.Errorf("%s %s with %d bytes: HTTP %d %.200s; want 413 naming the limit, 1048576 bytes", c.method, c.path, len(c.body), code, b)
		}
	}
	s := h.status()
	if ep := s.Endpoints[0]; !s.Hedge.Enabled || ep.Fault != nil || ep.Drained || s.Endpoints[1].Role != "primary" {
		t.Fatalf("a refused body changed the pool: hedging %v, s0 fault %+v drained %v, s1 %s", s.Hedge.Enabled, ep.Fault, ep.Drained, s.Endpoints[1].Role)
	}
}
