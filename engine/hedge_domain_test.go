package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// sharedFate puts s0 and s1 in one failure domain (same provider and
// region) and s2, when there is one, in its own.
func sharedFate(c *engine.Config) {
	for i := range c.Endpoints {
		if i < 2 {
			c.Endpoints[i].Provider, c.Endpoints[i].Region = "same", "same"
		}
	}
}

// hedge.same_domain = false: a hedge goes only to another failure domain
// than the request's live attempts; with none left it is not sent (and the
// budget is not spent). The default (true) still hedges into the domain.
func TestHedge_SameDomainFalseNeverHedgesIntoSharedFate(t *testing.T) {
	slow, fast := sim.Config{Latency: fixed(200 * time.Millisecond)}, sim.Config{Latency: fixed(10 * time.Millisecond)}
	for _, tc := range []struct {
		name       string
		sameDomain bool
		sims       []sim.Config
		wantHedged bool
		wantBy     string
	}{
		{"false, only the shared domain left", false, []sim.Config{slow, fast}, false, "s0"},
		{"true (default), only the shared domain left", true, []sim.Config{slow, fast}, true, "s1"},
		{"false, another domain left", false, []sim.Config{slow, slow, fast}, true, "s2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) {
				hedgeOn("50ms")(c)
				sharedFate(c)
				c.Hedge.SameDomain = tc.sameDomain
			}, tc.sims...)
			r := h.call(1, "eth_getBalance", addr, "latest") // cold: s0 is the primary
			mustOK(t, r)
			if r.hedged != tc.wantHedged || r.endpoint != tc.wantBy {
				t.Fatalf("hedged=%v answered by %s (attempts %d); want hedged=%v by %s", r.hedged, r.endpoint, r.attempts, tc.wantHedged, tc.wantBy)
			}
			st := h.status()
			if st.Hedge.SameDomain != tc.sameDomain {
				t.Fatalf("status hedge.same_domain %v, config %v", st.Hedge.SameDomain, tc.sameDomain)
			}
			if m := st.Methods["eth_getBalance"]; !tc.wantHedged && m.HedgesFired != 0 {
				t.Fatalf("a hedge counted though none was sent: %+v", m)
			}
			t.Logf("hedged=%v by %s in %s", r.hedged, r.endpoint, r.took.Round(time.Millisecond))
		})
	}
}
