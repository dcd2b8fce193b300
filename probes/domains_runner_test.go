package probes

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// statusWarning is one of the status's warning_details.
type statusWarning struct {
	Endpoints []string `json:"endpoints"`
	Reason    string   `json:"reason"`
	Text      string   `json:"text"`
}

// statusWarnings reads the status over the admin API: its warning_details
// and each endpoint's failure domain.
func (r *rig) statusWarnings() (details []statusWarning, domains map[string]string) {
	r.t.Helper()
	resp, err := r.client.Get("http://" + r.eng.AdminAddr() + "/v1/status")
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Details   []statusWarning `json:"warning_details"`
		Endpoints []struct {
			Name   string `json:"name"`
			Domain string `json:"domain"`
		} `json:"endpoints"`
	}
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("status: HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		r.t.Fatal(err)
	}
	domains = map[string]string{}
	for _, ep := range st.Endpoints {
		domains[ep.Name] = ep.Domain
	}
	return st.Details, domains
}

// Two sims on loopback that the checks see on two networks (the test's DNS
// answers 127.0.1.1 for localhost, where s0 is reached; nothing connects
// there): independent by address, they are one failure domain or two by
// their configured provider and region alone, as the status and the
// events say.
func TestRunner_ProviderOrRegionDecidesTheDomainsTheStatusShows(t *testing.T) {
	for _, tc := range []struct {
		name             string
		provider, region string // s1's; s0 is p0 in r0
		sameDomain       bool
		want             []statusWarning
	}{
		{"another provider in another region", "p1", "r1", false, []statusWarning{
			{Endpoints: []string{}, Reason: "two-domains", Text: "only two failure domains: while one is out, every request rides on the other " +
				"with no independent endpoint to fail over or hedge to; a third (another provider in another region) keeps failover and hedging through an outage"},
		}},
		{"the same provider in another region", "P0", "r1", true, []statusWarning{
			{Endpoints: []string{"s0", "s1"}, Reason: "provider-region", Text: "s0 and s1 have the same provider p0: one provider outage takes both, whatever their regions"},
			{Endpoints: []string{"s0", "s1"}, Reason: "pool", Text: "only one failure domain: a single outage can take every endpoint"},
		}},
		{"another provider in the same region", "p1", "r0", true, []statusWarning{
			{Endpoints: []string{"s0", "s1"}, Reason: "provider-region", Text: "s0 and s1 are in the same region r0: one regional outage takes both, whatever their providers"},
			{Endpoints: []string{"s0", "s1"}, Reason: "pool", Text: "only one failure domain: a single outage can take every endpoint"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFakeDNS(t)
			f.a("localhost", "127.0.1.1")
			r := newRig(t, func(c *engine.Config) {
				c.Probes.Resolver = f.addr
				c.Endpoints[0].URL = strings.Replace(c.Endpoints[0].URL, "127.0.0.1", "localhost", 1)
				c.Endpoints[1].Provider, c.Endpoints[1].Region = tc.provider, tc.region
			}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
			// Events come last in SetIndependence: once each warning is one,
			// the domains and the warnings are in place. Short of that, the
			// status below says what is there instead.
			poolEvent := func(text string) (engine.Event, bool) {
				return r.event(func(ev engine.Event) bool { return ev.Type == engine.EventPool && ev.Message == text })
			}
			if !testutil.Poll(5*time.Second, func() bool {
				for _, w := range tc.want {
					if _, ok := poolEvent(w.Text); !ok {
						return false
					}
				}
				return true
			}) {
				t.Errorf("not every warning became a pool event within 5s")
			}
			got, domains := r.statusWarnings()
			if !slices.EqualFunc(got, tc.want, func(a, b statusWarning) bool {
				return a.Reason == b.Reason && a.Text == b.Text && slices.Equal(a.Endpoints, b.Endpoints)
			}) {
				t.Errorf("warning_details\n got %+v\nwant %+v", got, tc.want)
			}
			if d0, d1 := domains["s0"], domains["s1"]; d0 == "" || d1 == "" || (d0 == d1) != tc.sameDomain {
				t.Errorf("domains s0 %q, s1 %q; want one domain: %v", d0, d1, tc.sameDomain)
			}
			// The advice is about the whole pool: its event names no endpoint.
			for _, w := range tc.want {
				if ev, _ := poolEvent(w.Text); w.Reason == "two-domains" && ev.Endpoint != "" {
					t.Errorf("the advice names endpoint %q", ev.Endpoint)
				}
			}
		})
	}
}
