package engine_test

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// roleEvents is the messages of the role events of name, oldest first.
func (h *harness) roleEvents(name string) []engine.Event {
	var out []engine.Event
	for _, ev := range h.events() {
		if ev.Type == engine.EventRole && ev.Endpoint == name {
			out = append(out, ev)
		}
	}
	return out
}

// replaceCanary makes the canary old a standby and the standby next the
// canary taking every read's first attempt, then sends it reads reads
// (ids from firstID).
func (h *harness) replaceCanary(old, next string, reads, firstID int) {
	h.t.Helper()
	if code, out := h.putRole(old, `{"role": "standby"}`); code != 200 {
		h.t.Fatalf("canary → standby: HTTP %d %v", code, out)
	}
	if code, out := h.putRole(next, `{"role": "canary", "share": 1}`); code != 200 {
		h.t.Fatalf("standby → canary: HTTP %d %v", code, out)
	}
	for i := 0; i < reads; i++ {
		mustOK(h.t, h.call(firstID+i, "eth_getBalance", addr, "0x10"))
	}
}

// The audit's case: a shadow whose every mirror failed (match_rate 0 over
// 30 compared, 30 errors) cannot be promoted — to primary, to canary, to
// standby — without "force": 409 naming the figures, its role and the
// pool untouched, no event. With "force": true it is taken, and the event
// says it was forced over which figures.
func TestRoleAPI_PromotingAShadowWhoseComparisonFailedIsRefusedUnlessForced(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{ErrorRate: 1})
	const n = 30
	for i := 0; i < n; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "0x10"))
	}
	if sh := h.settledShadow("beta", n); sh.Errors != n || sh.MatchRate != 0 {
		t.Fatalf("shadow figures %+v, want %d errors", *sh, n)
	}
	for _, role := range []string{"primary", "canary", "standby"} {
		code, out := h.putRole("beta", `{"role": "`+role+`"}`)
		msg, _ := out["error"].(string)
		want := "shadow beta: match_rate 0.00 over 30 compared (0 mismatch, 30 errors), below router.promote_match_rate 1.00; promote with \"force\": true to override"
		if code != 409 || msg != want {
			t.Fatalf("shadow → %s: HTTP %d %v, want 409 %q", role, code, out, want)
		}
		p, _ := out["promotion"].(map[string]any)
		c, _ := p["comparison"].(map[string]any)
		if p["from"] != "shadow" || p["to"] != role || p["refused"] != true || p["forced"] != false || p["judged"] != true ||
			c["verdict"] != "fail" || c["errors"] != 30.0 || c["match_rate"] != 0.0 || c["min_match_rate"] != 1.0 || c["min_compared"] != 20.0 {
			t.Fatalf("shadow → %s: promotion %v", role, p)
		}
	}
	if ep := h.endpoint("beta"); ep.Role != engine.RoleShadow {
		t.Fatalf("after the refusals beta is a %s", ep.Role)
	}
	if evs := h.roleEvents("beta"); len(evs) != 0 {
		t.Fatalf("refused promotions left events %+v", evs)
	}
	for i := 0; i < 5; i++ { // still only alpha answers
		if r := h.call(100+i, "eth_getBalance", addr, "0x10"); r.endpoint != "alpha" {
			t.Fatalf("after a refused promotion a read was answered by %q", r.endpoint)
		}
	}
	h.settledShadow("beta", n+5)
	code, out := h.putRole("beta", `{"role": "primary", "force": true}`)
	p, _ := out["promotion"].(map[string]any)
	if code != 200 || out["role"] != "primary" || p["forced"] != true || p["refused"] != true {
		t.Fatalf("forced promotion: HTTP %d %v", code, out)
	}
	evs := h.roleEvents("beta")
	if len(evs) != 1 || evs[0].From != "shadow" || evs[0].To != "primary" ||
		!strings.Contains(evs[0].Message, "promoted with force over a failed check: comparison failed: match_rate 0.00 over 35 compared (0 mismatch, 35 errors)") {
		t.Fatalf("forced promotion's event %+v", evs)
	}
}

// A shadow whose comparison passed is promoted, and the answer and the
// event say what it rests on; one with too few comparisons is promoted
// too, said unjudged. Other role changes answer as before: no promotion
// field, "force" accepted and of no effect.
func TestRoleAPI_AcceptedPromotionsSayWhatTheyRestOn(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{})
	for i := 0; i < 25; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "0x10"))
	}
	h.settledShadow("beta", 25)
	code, out := h.putRole("beta", `{"role": "canary", "share": 0.1}`)
	p, _ := out["promotion"].(map[string]any)
	c, _ := p["comparison"].(map[string]any)
	if code != 200 || out["role"] != "canary" || p["judged"] != true || p["refused"] != false || c["verdict"] != "pass" {
		t.Fatalf("passed shadow → canary: HTTP %d %v", code, out)
	}
	if evs := h.roleEvents("beta"); len(evs) != 1 || !strings.Contains(evs[0].Message, "promoted on: comparison passed: match_rate 1.00 over 25 compared (0 mismatch, 0 errors), at least 1.00 needed") {
		t.Fatalf("promotion event %+v", evs)
	}

	// alpha, never a shadow, back from standby: nothing to judge it on
	// (no comparison, no other primary), taken and said so.
	code, out = h.putRole("alpha", `{"role": "standby", "force": true}`)
	if _, has := out["promotion"]; code != 200 || has || out["role"] != "standby" {
		t.Fatalf("a demotion: HTTP %d %v, want 200 without a promotion", code, out)
	}
	code, out = h.putRole("alpha", `{"role": "primary"}`)
	p, _ = out["promotion"].(map[string]any)
	if code != 200 || p["judged"] != false || !strings.HasPrefix(p["evidence"].(string), "unjudged, too little evidence: no comparison") {
		t.Fatalf("standby with no comparison → primary: HTTP %d %v", code, out)
	}
	if evs := h.roleEvents("alpha"); len(evs) != 2 || !strings.Contains(evs[1].Message, "promoted on: unjudged, too little evidence") {
		t.Fatalf("alpha's role events %+v", evs)
	}
}

// A shadow with fewer than 20 comparisons is not judged: promoted, and
// said unjudged with its figures.
func TestRoleAPI_ATooYoungComparisonIsPromotedUnjudged(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{ErrorRate: 1})
	for i := 0; i < 5; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "0x10"))
	}
	h.settledShadow("beta", 5)
	code, out := h.putRole("beta", `{"role": "primary"}`)
	p, _ := out["promotion"].(map[string]any)
	c, _ := p["comparison"].(map[string]any)
	if code != 200 || p["judged"] != false || c["verdict"] != "unjudged" {
		t.Fatalf("5 comparisons: HTTP %d %v", code, out)
	}
	want := "comparison unjudged: 5 compared, fewer than 20 (match_rate 0.00 over 5 compared (0 mismatch, 5 errors))"
	if evs := h.roleEvents("beta"); len(evs) != 1 || !strings.Contains(evs[0].Message, want) {
		t.Fatalf("unjudged promotion's event %+v, want %q", evs, want)
	}
}

// A canary whose error rate is surely worse than the primaries' (every
// first attempt it took failed and failed over; alpha answered all) is not
// promoted to primary without "force"; a healthy canary is.
func TestRoleAPI_ACanaryFailingFarMoreThanThePrimariesIsNotPromoted(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Failures = 1000 // keep it drawing first attempts
		one := 1.0
		c.Endpoints[1].Role, c.Endpoints[1].Share = engine.RoleCanary, &one
		// gamma stands by until it is made the healthy canary, so that every
		// failover goes to alpha: the primaries' attempts the healthy canary
		// is judged against are then alpha's 60, not whatever share of them
		// the ranking of alpha and gamma gave alpha (15 of 60 on a busy machine).
		c.Endpoints[2].Role = engine.RoleStandby
	}, sim.Config{Name: "alpha"}, sim.Config{Name: "beta", ErrorRate: 1}, sim.Config{Name: "gamma"})
	for i := 0; i < 60; i++ { // failed over to alpha
		mustOK(t, h.call(i, "eth_getBalance", addr, "0x10"))
	}
	if ep := h.endpoint("beta"); ep.Rates.Failures < 50 {
		t.Fatalf("beta's rates %+v: want its 60 failed first attempts", ep.Rates)
	}
	code, out := h.putRole("beta", `{"role": "primary"}`)
	msg, _ := out["error"].(string)
	p, _ := out["promotion"].(map[string]any)
	r, _ := p["error_rate"].(map[string]any)
	if code != 409 || !strings.HasPrefix(msg, "canary beta: error rate 100.0% of ") || !strings.Contains(msg, "against the primaries' 0.0% of ") ||
		!strings.HasSuffix(msg, `promote with "force": true to override`) || r["verdict"] != "fail" {
		t.Fatalf("failing canary → primary: HTTP %d %v", code, out)
	}
	if ep := h.endpoint("beta"); ep.Role != engine.RoleCanary {
		t.Fatalf("after the refusal beta is a %s", ep.Role)
	}
	// gamma, a healthy standby made a canary taking every first read:
	// judged against alpha's attempts.
	h.replaceCanary("beta", "gamma", 30, 100)
	code, out = h.putRole("gamma", `{"role": "primary"}`)
	p, _ = out["promotion"].(map[string]any)
	r, _ = p["error_rate"].(map[string]any)
	if code != 200 || r["verdict"] != "pass" || p["judged"] != true {
		t.Fatalf("healthy canary → primary: HTTP %d %v", code, out)
	}
	if evs := h.roleEvents("gamma"); len(evs) != 2 || !strings.Contains(evs[1].Message, "promoted on: no comparison (never mirrored to as a shadow); error rate 0.0% of ") {
		t.Fatalf("gamma's promotion event %+v", evs)
	}
}

// A shadow far behind the head answers every read of the tip differently:
// all its comparisons are tip, none judged, so its comparison is unjudged
// (the audit: a shadow 1000 blocks behind, 90 mirrors all tip, was
// promoted "on: no comparison (never mirrored to as a shadow)"). The
// seed's compare step is there to catch stale nodes: lag-excluded, it is
// refused on its head, and forced it says what it was forced over.
func TestRoleAPI_AShadowFarBehindTheHeadIsRefusedAsStaleUnlessForced(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{HeadLag: 1000})
	const n = 25
	for i := 0; i < n; i++ {
		mustOK(t, h.call(i, "eth_blockNumber"))
	}
	if sh := h.settledShadow("beta", n); sh.Tip != n {
		t.Fatalf("shadow figures %+v, want %d tip", *sh, n)
	}
	for i, name := range []string{"alpha", "beta"} { // a probe round finds beta behind
		h.eng.ObserveProbeHead(name, h.sims[i].Head())
	}
	if ep := h.endpoint("beta"); !ep.LagExcluded || ep.Lag < 1000 {
		t.Fatalf("beta 1000 blocks behind: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
	}
	code, out := h.putRole("beta", `{"role": "primary"}`)
	p, _ := out["promotion"].(map[string]any)
	c, _ := p["comparison"].(map[string]any)
	hd, _ := p["head"].(map[string]any)
	msg, _ := out["error"].(string)
	if code != 409 || p["refused"] != true || c["verdict"] != "unjudged" || c["tip"] != float64(n) || hd["verdict"] != "fail" || hd["lag"].(float64) < 1000 || hd["unit"] != "blocks" {
		t.Fatalf("stale shadow → primary: HTTP %d %v", code, out)
	}
	if !strings.HasPrefix(msg, "shadow beta: 10") || !strings.Contains(msg, " blocks behind the pool head, more than chain.max_head_lag 5: stale; promote with \"force\": true to override") {
		t.Fatalf("refusal %q does not name the lag", msg)
	}
	if ep := h.endpoint("beta"); ep.Role != engine.RoleShadow {
		t.Fatalf("after the refusal beta is a %s", ep.Role)
	}
	code, out = h.putRole("beta", `{"role": "primary", "force": true}`)
	p, _ = out["promotion"].(map[string]any)
	ev, _ := p["evidence"].(string)
	want := "comparison unjudged: 0 compared, fewer than 20 (match_rate 0.00 over 0 compared (0 mismatch, 0 errors; 25 tip not counted))"
	if code != 200 || p["forced"] != true || !strings.HasPrefix(ev, want) || !strings.HasSuffix(ev, "more than chain.max_head_lag 5: stale") {
		t.Fatalf("forced: HTTP %d, evidence %q, want it to start %q and end with the lag", code, ev, want)
	}
}

// A current endpoint's head passes and judges nothing: a shadow in sync
// with too few comparisons is promoted as unjudged, as before the head
// was checked.
func TestRoleAPI_ACurrentShadowIsNotRefusedOnItsHead(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{})
	mustOK(t, h.call(0, "eth_blockNumber"))
	h.settledShadow("beta", 1)
	code, out := h.putRole("beta", `{"role": "primary"}`)
	p, _ := out["promotion"].(map[string]any)
	hd, _ := p["head"].(map[string]any)
	if code != 200 || p["judged"] != false || hd["verdict"] == "fail" {
		t.Fatalf("current shadow → primary: HTTP %d %v", code, out)
	}
}
