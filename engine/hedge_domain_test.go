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

// With hedge.same_domain false, an endpoint explored by a hedge (suspect:
// its latest attempt got no answer) is explored only beside a primary of
// another failure domain: s1 shares s0's, so only reads whose primary is
// s2 explore it. Its breaker never opens here (breaker.failures is out of
// reach), so it stays closed, suspect and due for exploration.
func TestHedge_SameDomainFalseExploresOnlyBesideAnotherDomain(t *testing.T) {
	t.Parallel()
	fast := sim.Config{Latency: fixed(5 * time.Millisecond)}
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("400ms")(c) // past the 250 ms attempt deadline: a hung primary is overdue, hence suspect
		sharedFate(c)
		c.Hedge.SameDomain = false
		c.Breaker.Failures = 1000
		c.Router.ExploreAfter = 200 * time.Millisecond
		c.Server.TraceRequests = 4000
	}, fast, fast, fast)
	openLoop(h, 20*time.Millisecond, time.Second, nil)
	if code, b := h.adminDo("POST", "/v1/endpoints/s1/fault", `{"mode":"timeout"}`); code != 200 {
		t.Fatalf("fault s1: HTTP %d %s", code, b)
	}
	for _, tr := range openLoop(h, 20*time.Millisecond, 4*time.Second, nil) {
		mustOK(t, tr.r)
	}
	var beside = map[string]int{}
	for _, tr := range h.traces("limit=4000").Requests {
		for _, a := range tr.Attempts[1:] {
			if a.Endpoint == "s1" && a.Role == "hedge" && a.StartMS < 50 {
				beside[tr.Attempts[0].Endpoint]++
			}
		}
	}
	if beside["s0"] > 0 || beside["s2"] == 0 {
		t.Fatalf("exploring hedges to s1 beside each primary: %v; want none beside s0 (its domain) and some beside s2", beside)
	}
	t.Logf("exploring hedges to s1 beside each primary: %v", beside)
}

// Before independence checks refine them (and for good with probes off),
// failure domains come from the configured provider and region, and either
// one shared is one domain (the failover seed: the same provider or the same
// region is a shared blast radius). The hedge after the slow primary s0
// skips s1, its provider's other region or another provider in its region,
// for s2: independent of s0 though no faster than s1.
func TestHedge_SameProviderOrSameRegionIsOneFailureDomain(t *testing.T) {
	slow, fast := sim.Config{Latency: fixed(300 * time.Millisecond)}, sim.Config{Latency: fixed(10 * time.Millisecond)}
	for _, tc := range []struct {
		name      string
		providers [3]string
		regions   [3]string
	}{
		{"one provider in two regions", [3]string{"infura", "Infura", "alchemy"}, [3]string{"us-east", "eu-west", "ap-south"}},
		{"two providers in one region", [3]string{"infura", "alchemy", "quicknode"}, [3]string{"us-east", "US-East", "ap-south"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) {
				hedgeOn("50ms")(c)
				for i := range c.Endpoints {
					c.Endpoints[i].Provider, c.Endpoints[i].Region = tc.providers[i], tc.regions[i]
				}
			}, slow, fast, fast)
			st := h.status()
			d := []string{st.Endpoints[0].Domain, st.Endpoints[1].Domain, st.Endpoints[2].Domain}
			if d[0] == "" || d[0] != d[1] || d[2] == "" || d[2] == d[0] {
				t.Errorf("domains %q: want s0 and s1 in one, s2 in another", d)
			}
			r := h.call(1, "eth_getBalance", addr, "latest") // cold: s0 is the primary
			mustOK(t, r)
			if !r.hedged || r.endpoint != "s2" || h.sims[1].MethodCount("eth_getBalance") != 0 {
				t.Fatalf("hedged=%v answered by %s, s1 asked %d times; want the hedge to s2, s1 never asked",
					r.hedged, r.endpoint, h.sims[1].MethodCount("eth_getBalance"))
			}
		})
	}
}
