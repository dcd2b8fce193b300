package engine_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// Two endpoints: s0's breaker opened on errors and s0 has healed since, but
// its cooldown has not run out; now s1, the one routable endpoint, fails
// (its breaker held closed by breaker.max_open_share). One of two routable
// is not below router.panic_threshold, so panic routing stays off. A read
// whose routable candidates all failed goes on to s0 rather than answer an
// error: a client talking to s0 directly gets its answer.
func TestFailover_ReadWhoseRoutableEndpointsFailedTriesTheOpenBreaker(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Breaker.Cooldown = time.Minute }, sim.Config{}, sim.Config{})
	readUntilOpen(t, h, "s0", h.sims[0])
	h.sims[0].SetMode(sim.ModeNormal)
	h.sims[1].SetMode(sim.ModeError)

	const reads = 10
	failed := 0
	for i := 0; i < reads; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		if r.status != 200 || r.rpcError() != nil {
			failed++
			continue
		}
		if r.endpoint != "s0" || r.attempts != 2 {
			t.Errorf("read answered by %q after %d attempts, want s0 after 2 (s1 failed first)", r.endpoint, r.attempts)
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d reads answered an error while s0 could answer them", failed, reads)
	}
	st := h.status()
	if st.Panic {
		t.Fatalf("panic routing on (%s): this test is about the read's own failover", st.PanicReason)
	}
	if b := h.endpoint("s0").Breaker; b.State != engine.BreakerOpen {
		t.Fatalf("s0's breaker %s: an attempt past an open breaker gives it no verdict", b.State)
	}
}

// An endpoint backing off after a 429 is no last resort: it asked to be
// left alone until its Retry-After, and a request to it spends the quota
// that limits it (and may extend the limit). A read whose routable
// endpoint failed is answered that endpoint's failure without asking it.
// (Panic routing, with no endpoint routable, still takes it, soonest
// back-off end first: s0's breaker is kept closed here.)
func TestFailover_EndpointBackingOffIsNoLastResort(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		takeTurns(c)
		c.Breaker.Failures = 100
	}, sim.Config{}, sim.Config{RetryAfter: 30 * time.Second})
	h.sims[1].SetMode(sim.ModeRateLimit)
	for i := range 4 { // s1 answers 429 once and backs off; s0 answers
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if ep := h.endpoint("s1"); ep.BackoffUntil.IsZero() && len(ep.Methods) > 0 && ep.Methods["eth_getBalance"].BackoffUntil.IsZero() {
		t.Fatalf("s1 is not backing off after its 429")
	}
	h.sims[0].SetMode(sim.ModeError)
	before := h.sims[1].MethodCount("eth_getBalance")
	for i := range 5 {
		if r := h.call(10+i, "eth_getBalance", addr, "latest"); r.rpcError() == nil {
			t.Fatalf("read answered while s0 fails and s1 backs off: %s", r.body)
		}
	}
	if n := h.sims[1].MethodCount("eth_getBalance") - before; n != 0 {
		t.Fatalf("s1, backing off after a 429, was sent %d of 5 reads as a last resort", n)
	}
}

// /v1/status's last_resort is the engine's own count of the endpoints
// panic routing may still send a read to (the console's NO ROUTABLE
// ENDPOINT reads it): not the drained one, not the shadow, not the one
// refusing connections; the one whose breaker is open on errors counts.
func TestStatus_LastResortCountsWhatPanicRoutingMayUse(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Cooldown = time.Minute
		c.Breaker.MaxOpenShare = 1
		c.Endpoints[1].Role = "shadow"
	}, sim.Config{}, sim.Config{}, sim.Config{}, sim.Config{})
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s0/drain", ""); code != http.StatusOK {
		t.Fatalf("drain s0: HTTP %d %s", code, body)
	}
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s2/fault", `{"mode":"refused"}`); code != http.StatusOK {
		t.Fatalf("inject refused on s2: HTTP %d %s", code, body)
	}
	h.sims[3].SetMode(sim.ModeError)
	for i := 0; h.endpoint("s2").Breaker.State != engine.BreakerOpen || h.endpoint("s3").Breaker.State != engine.BreakerOpen; i++ {
		if i == 100 {
			t.Fatalf("breakers not both open after 100 reads: s2 %s, s3 %s", h.endpoint("s2").Breaker.State, h.endpoint("s3").Breaker.State)
		}
		h.call(i, "eth_getBalance", addr, "latest")
	}
	var raw struct {
		LastResort *int `json:"last_resort"`
	}
	_, b := h.adminDo(http.MethodGet, "/v1/status", "")
	if err := json.Unmarshal(b, &raw); err != nil || raw.LastResort == nil {
		t.Fatalf("/v1/status has no last_resort (%v)", err)
	}
	if st := h.status(); st.Routable != 0 || st.LastResort != 1 || *raw.LastResort != 1 {
		t.Fatalf("routable %d, last_resort %d; want 0 and 1 (s3, open on errors)", st.Routable, st.LastResort)
	}
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s3/drain", ""); code != http.StatusOK {
		t.Fatalf("drain s3: HTTP %d %s", code, body)
	}
	if st := h.status(); st.LastResort != 0 {
		t.Fatalf("last_resort %d with s3 drained too; want 0", st.LastResort)
	}
}
