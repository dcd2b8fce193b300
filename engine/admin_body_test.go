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

// Admin field names are matched exactly and given once. encoding/json
// matched "Mode" as "mode" and let the last of two "enabled" win: a
// body a reader (or a proxy's filter) took for a latency fault injected an
// error fault, one that read as enabling hedging disabled it.
func TestAdminBody_FieldNamesExactAndGivenOnce(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = true }, sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)})
	cases := []struct{ method, path, body, field string }{
		{"POST", "/v1/endpoints/s0/fault", `{"mode":"latency","Mode":"error"}`, "Mode"},
		{"POST", "/v1/endpoints/s0/fault", `{"MODE":"error"}`, "MODE"},
		{"POST", "/v1/endpoints/s0/fault", `{"mode":"latency","mode":"error"}`, "mode"},
		{"PUT", "/v1/hedge", `{"enabled":true,"Enabled":false}`, "Enabled"},
		{"PUT", "/v1/hedge", `{"enabled":true,"enabled":false}`, "enabled"},
		{"PUT", "/v1/hedge", `{"enabled":true,"en\u0061bled":false}`, "enabled"},
		{"PUT", "/v1/hedge", `{"ALL_METHODS":true,"enabled":false}`, "ALL_METHODS"},
		{"PUT", "/v1/endpoints/s1/role", `{"Role":"standby"}`, "Role"},
		{"PUT", "/v1/endpoints/s1/role", `{"role":"primary","role":"standby"}`, "role"},
	}
	for _, c := range cases {
		code, b := h.adminDo(c.method, c.path, c.body)
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if code != 400 || !strings.HasPrefix(e.Error, c.field+":") {
			t.Errorf("%s %s %s: HTTP %d %q; want 400 starting with %q", c.method, c.path, c.body, code, e.Error, c.field+":")
		}
	}
	s := h.status()
	if ep := s.Endpoints[0]; !s.Hedge.Enabled || ep.Fault != nil || s.Endpoints[1].Role != "primary" {
		t.Fatalf("a refused body changed the pool: hedging %v, s0 fault %+v, s1 %s", s.Hedge.Enabled, ep.Fault, s.Endpoints[1].Role)
	}
	// The exact names still work.
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"enabled":false}`); code != 200 {
		t.Fatalf("PUT /v1/hedge {\"enabled\":false}: HTTP %d %s", code, b)
	}
}
