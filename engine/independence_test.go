package engine_test

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// The advice about a pool of exactly two failure domains (probes' reason
// "two-domains") names no endpoint: it is an event of the pool, and the
// hedging model's notes do not call the endpoints dependent for it, as
// they do for a single domain.
func TestIndependence_TwoDomainsAdviceIsNoSharedFate(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	h.loadBy(20, 2) // primaries to forecast from
	advice := engine.Warning{Reason: "two-domains", Text: "only two failure domains: while one is out, every request rides on the other"}
	h.eng.SetIndependence(nil, map[string]string{"s0": "d1", "s1": "d2"}, []engine.Warning{advice})
	notes := func() string {
		var rep engine.ForecastReport
		h.getJSON("/v1/hedge/forecast?method=eth_getBalance&delays=50ms", &rep)
		return strings.Join(rep.Notes, " | ")
	}
	if n := notes(); strings.Contains(n, "not independent") {
		t.Errorf("two domains read as shared fate: %s", n)
	}
	found := false
	for _, ev := range h.events() {
		if ev.Type == engine.EventPool && ev.Message == advice.Text {
			found = true
			if ev.Endpoint != "" {
				t.Errorf("the advice's event names endpoint %q", ev.Endpoint)
			}
		}
	}
	if !found {
		t.Errorf("no pool event for the advice: %+v", h.events())
	}
	one := engine.Warning{Endpoints: []string{"s0", "s1"}, Reason: "pool", Text: "only one failure domain: a single outage can take every endpoint"}
	h.eng.SetIndependence(nil, map[string]string{"s0": "d1", "s1": "d1"}, []engine.Warning{one})
	if n := notes(); !strings.Contains(n, "not independent") {
		t.Errorf("one domain not read as shared fate: %s", n)
	}
}
