package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// twoDomainsSnapshot: alchemy and infura on one provider in two regions
// (one failure domain), quicknode on its own, and the advice about a pool
// of two domains, as the independence checks report them.
func twoDomainsSnapshot() engine.Snapshot {
	s := healthySnapshot()
	s.Endpoints[1].Provider = "alchemy"
	s.Endpoints[0].Domain, s.Endpoints[1].Domain, s.Endpoints[2].Domain = "d1", "d1", "d2"
	s.Warnings = []engine.Warning{
		{Endpoints: []string{"alchemy", "infura"}, Reason: "provider-region", Text: "alchemy and infura have the same provider alchemy: one provider outage takes both, whatever their regions"},
		{Reason: "two-domains", Text: "only two failure domains: while one is out, every request rides on the other with no independent endpoint to fail over or hedge to; a third (another provider in another region) keeps failover and hedging through an outage"},
	}
	return s
}

// The independence column says "shared d1" for the endpoints one provider
// ties, with what they share in the detail, and "own d2" for the other:
// the advice about the pool names no endpoint and makes none shared, and
// the tuning view does not read it as one failure domain.
func TestView_TwoDomainsAdviceSharesNoEndpointsFate(t *testing.T) {
	m := fixedModel(twoDomainsSnapshot(), themes.Default(), 160, 48)
	rows := map[string]string{}
	for _, l := range strings.Split(ansi.Strip(m.View()), "\n") {
		for _, n := range []string{"alchemy", "infura", "quicknode"} {
			if _, seen := rows[n]; !seen && strings.HasPrefix(strings.TrimLeft(l, "│▸ "), n+" ") {
				rows[n] = l
			}
		}
	}
	for n, want := range map[string]string{"alchemy": "shared d1", "infura": "shared d1", "quicknode": "own d2"} {
		if !strings.Contains(rows[n], want) {
			t.Errorf("%s's row lacks %q: %q", n, want, rows[n])
		}
	}
	detail := func(i int) string {
		d := m
		d.epCursor = i
		return ansi.Strip(strings.Join(d.detailLines(100), "\n"))
	}
	if d := detail(0); !strings.Contains(d, "shared fate: alchemy and infura have the same provider alchemy") {
		t.Errorf("alchemy's detail does not say what it shares:\n%s", d)
	}
	if d := detail(2); strings.Contains(d, "shared fate") || strings.Contains(d, "only two failure domains") {
		t.Errorf("quicknode's detail reads the pool's advice as its own:\n%s", d)
	}
	if why := m.modelOptimistic(); strings.Contains(why, "single failure domain") {
		t.Errorf("the tuning view reads two domains as one: %q", why)
	}
}
