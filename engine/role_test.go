package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

func (h *harness) putRole(name, body string) (int, map[string]any) {
	h.t.Helper()
	code, b := h.adminDo("PUT", "/v1/endpoints/"+name+"/role", body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		h.t.Fatalf("PUT role %s: HTTP %d, not JSON: %s", body, code, b)
	}
	return code, out
}

// PUT /v1/endpoints/{name}/role: 200 with name, role and share (the role's
// default when left out); 404 for an unknown endpoint; 400 naming the field
// for a bad role, a bad share or an unknown field; 409 when no endpoint
// would be left to answer. Each change is a role event with its actor.
func TestRoleAPI_EveryAnswer(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Name: "alpha"}, sim.Config{Name: "beta"})
	code, out := h.putRole("beta", `{"role": "canary", "share": 0.1}`)
	if code != 200 || out["name"] != "beta" || out["role"] != "canary" || out["share"] != 0.1 {
		t.Fatalf("canary 0.1: HTTP %d %v", code, out)
	}
	code, out = h.putRole("beta", `{"role": "shadow"}`)
	if code != 200 || out["role"] != "shadow" || out["share"] != 1.0 {
		t.Fatalf("shadow, default share: HTTP %d %v", code, out)
	}
	code, out = h.putRole("beta", `{"role": "canary"}`)
	if code != 200 || out["share"] != 0.05 {
		t.Fatalf("canary, default share: HTTP %d %v", code, out)
	}
	bad := []struct{ body, field string }{
		{`{"role": "backup"}`, "role:"},
		{`{}`, "role: required"},
		{`{"role": 3}`, "role:"},
		{`{"role": "canary", "share": 0}`, "share: must be in (0, 1]"},
		{`{"role": "canary", "share": 1.5}`, "share: must be in (0, 1]"},
		{`{"role": "canary", "share": "lots"}`, "share:"},
		{`{"role": "primary", "share": 0.5}`, "share: only a"},
		{`{"role": "canary", "weight": 2}`, "weight: unknown field"},
	}
	for _, b := range bad {
		code, out := h.putRole("beta", b.body)
		if msg, _ := out["error"].(string); code != 400 || !strings.HasPrefix(msg, b.field) {
			t.Errorf("%s: HTTP %d %v, want 400 starting %q", b.body, code, out, b.field)
		}
	}
	if code, out := h.putRole("gamma", `{"role": "standby"}`); code != 404 {
		t.Errorf("unknown endpoint: HTTP %d %v, want 404", code, out)
	}
	if code, out := h.putRole("beta", `{"role": "shadow"}`); code != 200 {
		t.Fatalf("beta shadow: HTTP %d %v", code, out)
	}
	if code, out := h.putRole("alpha", `{"role": "shadow"}`); code != 409 {
		t.Errorf("last answerer to shadow: HTTP %d %v, want 409", code, out)
	}
	if st := h.status(); st.Endpoints[0].Role != engine.RolePrimary || st.Endpoints[1].Role != engine.RoleShadow {
		t.Fatalf("after the refusals: roles %s %s", st.Endpoints[0].Role, st.Endpoints[1].Role)
	}
	var roles []string
	for _, ev := range h.events() {
		if ev.Type == engine.EventRole {
			if ev.Actor != engine.ActorAdmin || ev.Endpoint != "beta" {
				t.Fatalf("role event %+v", ev)
			}
			roles = append(roles, ev.From+">"+ev.To)
		}
	}
	want := "primary>canary 10%,canary 10%>shadow,shadow>canary 5%,canary 5%>shadow"
	if strings.Join(roles, ",") != want {
		t.Fatalf("role events %v, want %s", roles, want)
	}
}

// The seed's cutover, done live: beta as a shadow gets only mirrors;
// promoted to primary and alpha demoted to standby, the very next read is
// beta's and alpha gets none (kept, not deleted: it takes over if beta
// fails).
func TestRoleAPI_PromoteShadowAndDemotePrimaryTakeEffectOnTheNextRequest(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Endpoints[1].Role = engine.RoleShadow },
		sim.Config{Name: "alpha"}, sim.Config{Name: "beta"})
	alpha, beta := h.sims[0], h.sims[1]
	for i := 0; i < 5; i++ {
		if r := h.call(i, "eth_getBalance", addr, "0x10"); r.endpoint != "alpha" {
			t.Fatalf("shadow phase: read answered by %q", r.endpoint)
		}
	}
	h.settledShadow("beta", 5)
	if code, out := h.putRole("beta", `{"role": "primary"}`); code != 200 || out["share"] != 0.0 {
		t.Fatalf("promote: HTTP %d %v", code, out)
	}
	if code, out := h.putRole("alpha", `{"role": "standby"}`); code != 200 {
		t.Fatalf("demote: HTTP %d %v", code, out)
	}
	before := alpha.MethodCount("eth_getBalance")
	for i := 0; i < 20; i++ {
		r := h.call(100+i, "eth_getBalance", addr, "0x10")
		mustOK(t, r)
		if r.endpoint != "beta" {
			t.Fatalf("read %d after the cutover answered by %q", i, r.endpoint)
		}
	}
	if got := alpha.MethodCount("eth_getBalance") - before; got != 0 {
		t.Fatalf("the demoted primary got %d reads", got)
	}
	if got := beta.MethodCount("eth_getBalance"); got != 25 {
		t.Fatalf("beta got %d reads, want 5 mirrors and 20 answers", got)
	}
	// The old primary, now a standby, catches beta's failure.
	beta.SetMode(sim.ModeError)
	r := h.call(500, "eth_getBalance", addr, "0x10")
	mustOK(t, r)
	if r.endpoint != "alpha" {
		t.Fatalf("with beta failing, answered by %q", r.endpoint)
	}
}

// The last endpoint able to answer now cannot become a shadow: a drained
// endpoint and one on another chain do not count as answerers. Once one
// can answer again, the change is taken.
func TestRoleAPI_DrainedAndWrongChainEndpointsAreNotAnswerers(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Name: "alpha"}, sim.Config{Name: "beta"}, sim.Config{Name: "gamma"})
	if code, b := h.adminDo("POST", "/v1/endpoints/beta/drain", ""); code != 200 {
		t.Fatalf("drain: HTTP %d %s", code, b)
	}
	h.eng.Exclude("gamma", engine.ExcludeWrongChain, "on chain id 0x5 (5), pool is on 0x1 (1)")
	code, out := h.putRole("alpha", `{"role": "shadow"}`)
	if msg, _ := out["error"].(string); code != 409 || !strings.Contains(msg, "alpha is the last that can answer clients") {
		t.Fatalf("alpha to shadow with beta drained and gamma on the wrong chain: HTTP %d %v, want 409", code, out)
	}
	if st := h.status(); st.Endpoints[0].Role != engine.RolePrimary {
		t.Fatalf("alpha's role after the refusal: %s", st.Endpoints[0].Role)
	}
	if code, b := h.adminDo("POST", "/v1/endpoints/beta/undrain", ""); code != 200 {
		t.Fatalf("undrain: HTTP %d %s", code, b)
	}
	if code, out := h.putRole("alpha", `{"role": "shadow"}`); code != 200 {
		t.Fatalf("alpha to shadow with beta back: HTTP %d %v", code, out)
	}
	r := h.call(1, "eth_getBalance", addr, "0x10")
	mustOK(t, r)
	if r.endpoint != "beta" {
		t.Fatalf("read answered by %q, want beta", r.endpoint)
	}
}

// A filter lives on the endpoint that created it: made a shadow, that
// endpoint still answers the polls of the filters it holds (their state is
// nowhere else), and the role event says so.
func TestRoleAPI_AShadowKeepsAnsweringPollsOfItsFilters(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Name: "alpha"}, sim.Config{Name: "beta"})
	f := h.call(1, "eth_newBlockFilter")
	mustOK(t, f)
	owner := f.endpoint
	if code, out := h.putRole(owner, `{"role": "shadow"}`); code != 200 {
		t.Fatalf("%s to shadow: HTTP %d %v", owner, code, out)
	}
	r := h.call(2, "eth_getFilterChanges", strings.Trim(resultString(t, f), `"`))
	mustOK(t, r)
	if r.endpoint != owner {
		t.Fatalf("poll of a filter held by shadow %s answered by %q", owner, r.endpoint)
	}
	var msg string
	for _, ev := range h.events() {
		if ev.Type == engine.EventRole && ev.Endpoint == owner {
			msg = ev.Message
		}
	}
	if !strings.Contains(msg, "the 1 filter it holds is still polled on it") {
		t.Fatalf("role event %q does not say the filters stay", msg)
	}
}

// A drained endpoint made a primary (or a canary, a standby) stays out of
// rotation until undrained: the role event says so, as the roles audit
// found an operator promoting a drained endpoint told nothing of it.
func TestRoleAPI_ARoleChangeOfADrainedEndpointSaysItStaysDrained(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Name: "alpha"}, sim.Config{Name: "beta"})
	if code, out := h.putRole("beta", `{"role": "standby"}`); code != 200 {
		t.Fatalf("beta to standby: HTTP %d %v", code, out)
	}
	if err := h.eng.Drain(engine.ActorAdmin, "beta"); err != nil {
		t.Fatal(err)
	}
	if code, out := h.putRole("beta", `{"role": "primary"}`); code != 200 {
		t.Fatalf("drained beta to primary: HTTP %d %v", code, out)
	}
	evs := h.roleEvents("beta")
	if last := evs[len(evs)-1]; !strings.Contains(last.Message, "it is drained: it takes no request until undrained") {
		t.Fatalf("the role event %q does not say beta stays drained", last.Message)
	}
	if first := evs[0]; strings.Contains(first.Message, "drained") {
		t.Fatalf("the role event before the drain %q says drained", first.Message)
	}
	r := h.call(1, "eth_getBalance", addr, "0x10")
	if mustOK(t, r); r.endpoint != "alpha" {
		t.Fatalf("a read went to %q while beta is drained", r.endpoint)
	}
}
