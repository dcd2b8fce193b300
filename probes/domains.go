package probes

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/rpcdash/rpcdash/engine"
)

// GroupDomains puts endpoints that share an IP, an IPv4 /24, an IPv6 /48, an
// AS number, a leaf certificate, a (non-empty) provider or a (non-empty)
// region into one failure domain: sharing any one of them is a shared blast
// radius, and the sharing is transitive. Domain ids are "d1", "d2", … in the order of each domain's
// first endpoint by name, so the result depends only on the endpoints, not on
// their order. Warnings name every sharing pair once per reason (a /24 or /48
// already explained by a shared IP is not repeated), then every endpoint whose
// AS is unknown, then the pool when it has fewer than two domains, or advice
// when it has exactly two.
func GroupDomains(eps []EndpointIndependence) (domains map[string]string, count int, warnings []Warning) {
	order := make([]int, len(eps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(eps[a].Name, eps[b].Name) })

	facts := make([]endpointFacts, len(eps))
	for i := range eps {
		facts[i] = factsOf(&eps[i])
	}
	parent := make([]int, len(eps))
	for i := range parent {
		parent[i] = i
	}
	for x, i := range order {
		for _, j := range order[x+1:] {
			shared := facts[i].shared(&facts[j])
			for _, w := range shared.warnings(eps[i].Name, eps[j].Name) {
				warnings = append(warnings, w)
				union(parent, i, j)
			}
		}
	}

	domains = make(map[string]string, len(eps))
	ids := map[int]string{}
	for _, i := range order {
		root := find(parent, i)
		if _, ok := ids[root]; !ok {
			ids[root] = fmt.Sprintf("d%d", len(ids)+1)
		}
		domains[eps[i].Name] = ids[root]
	}
	count = len(ids)

	for _, i := range order {
		if w, ok := unknownASNWarning(&eps[i]); ok {
			warnings = append(warnings, w)
		}
	}
	switch {
	case count < 2:
		warnings = append(warnings, poolWarning(eps, order, count))
	case count == 2:
		warnings = append(warnings, twoDomainsWarning())
	}
	return domains, count, warnings
}

// endpointFacts holds the keys an endpoint can share, each as a sorted set.
type endpointFacts struct {
	ips, p24, p48 []string
	asns          []uint32
	asnNames      map[uint32]string
	leaf          string
	// The configured provider and region, each case-folded for comparing
	// ("" when unset) and as written for the warning.
	provider, providerText string
	region, regionText     string
}

func factsOf(ep *EndpointIndependence) endpointFacts {
	f := endpointFacts{asnNames: map[uint32]string{}}
	for _, info := range ep.IPs {
		if a, err := netip.ParseAddr(info.IP); err == nil {
			a = a.Unmap()
			f.ips = append(f.ips, a.String())
			if a.Is4() {
				f.p24 = append(f.p24, netip.PrefixFrom(a, 24).Masked().String())
			} else {
				f.p48 = append(f.p48, netip.PrefixFrom(a, 48).Masked().String())
			}
		}
		if info.ASN != nil {
			f.asns = append(f.asns, info.ASN.Number)
			if info.ASN.Name != "" {
				f.asnNames[info.ASN.Number] = info.ASN.Name
			}
		}
	}
	for _, s := range []*[]string{&f.ips, &f.p24, &f.p48} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	slices.Sort(f.asns)
	f.asns = slices.Compact(f.asns)
	if ep.TLS != nil {
		f.leaf = ep.TLS.LeafFingerprint
	}
	f.providerText, f.regionText = strings.TrimSpace(ep.Provider), strings.TrimSpace(ep.Region)
	f.provider, f.region = strings.ToLower(f.providerText), strings.ToLower(f.regionText)
	return f
}

// sharedFacts is what two endpoints have in common.
type sharedFacts struct {
	ips, p24, p48 []string
	asns          []string // "AS13335 (CLOUDFLARENET - Cloudflare, Inc.)"
	leaf          string
	provider      string // as the first endpoint writes it, "" if not shared
	region        string
}

func (f *endpointFacts) shared(g *endpointFacts) sharedFacts {
	var s sharedFacts
	s.ips = intersect(f.ips, g.ips)
	// A network that holds a shared IP is no news once the IP is reported.
	covered := func(prefix string) bool {
		p := netip.MustParsePrefix(prefix)
		return slices.ContainsFunc(s.ips, func(ip string) bool { return p.Contains(netip.MustParseAddr(ip)) })
	}
	s.p24 = slices.DeleteFunc(intersect(f.p24, g.p24), covered)
	s.p48 = slices.DeleteFunc(intersect(f.p48, g.p48), covered)
	for _, n := range intersect(f.asns, g.asns) {
		name := cmp.Or(f.asnNames[n], g.asnNames[n])
		if name == "" {
			s.asns = append(s.asns, fmt.Sprintf("AS%d", n))
		} else {
			s.asns = append(s.asns, fmt.Sprintf("AS%d (%s)", n, name))
		}
	}
	if f.leaf != "" && f.leaf == g.leaf {
		s.leaf = f.leaf
	}
	// One provider is one blast radius whatever the regions, and one region
	// whatever the providers (the failover seed's planning rule).
	if f.provider != "" && f.provider == g.provider {
		s.provider = f.providerText
	}
	if f.region != "" && f.region == g.region {
		s.region = f.regionText
	}
	return s
}

// warnings lists one Warning per reason, in the order of the Reason* constants.
func (s sharedFacts) warnings(a, b string) []Warning {
	var out []Warning
	add := func(reason, text string) {
		out = append(out, Warning{Endpoints: []string{a, b}, Reason: reason, Text: a + " and " + b + " " + text})
	}
	if len(s.ips) > 0 {
		add(ReasonIP, fmt.Sprintf("resolve to the same %s %s: one outage takes both", engine.Plural(len(s.ips), "IP", "IPs"), joinAnd(s.ips)))
	}
	if len(s.p24) > 0 {
		add(ReasonPrefix24, fmt.Sprintf("share the IPv4 %s %s: likely one site or load balancer, one outage can take both", engine.Plural(len(s.p24), "network", "networks"), joinAnd(s.p24)))
	}
	if len(s.p48) > 0 {
		add(ReasonPrefix48, fmt.Sprintf("share the IPv6 %s %s: likely one site or load balancer, one outage can take both", engine.Plural(len(s.p48), "network", "networks"), joinAnd(s.p48)))
	}
	if len(s.asns) > 0 {
		add(ReasonASN, fmt.Sprintf("share %s: one outage takes both", joinAnd(s.asns)))
	}
	if s.leaf != "" {
		add(ReasonTLSLeaf, fmt.Sprintf("present the same TLS certificate (sha256 %.12s…): likely one server or load balancer, one outage takes both", s.leaf))
	}
	switch {
	case s.provider != "" && s.region != "":
		add(ReasonProviderRegion, fmt.Sprintf("are both %s in %s: one provider or region outage takes both", s.provider, s.region))
	case s.provider != "":
		add(ReasonProviderRegion, fmt.Sprintf("have the same provider %s: one provider outage takes both, whatever their regions", s.provider))
	case s.region != "":
		add(ReasonProviderRegion, fmt.Sprintf("are in the same region %s: one regional outage takes both, whatever their providers", s.region))
	}
	return out
}

func unknownASNWarning(ep *EndpointIndependence) (Warning, bool) {
	var why string
	switch {
	case ep.ResolveError != "" && len(ep.IPs) == 0:
		why = "address unknown: " + ep.ResolveError
	default:
		for _, info := range ep.IPs {
			if info.ASN == nil && info.ASNError != "" {
				why = info.ASNError
				if len(ep.IPs) > 1 {
					why = info.IP + ": " + why
				}
				break
			}
		}
	}
	if why == "" {
		return Warning{}, false
	}
	return Warning{
		Endpoints: []string{ep.Name},
		Reason:    ReasonASNUnknown,
		Text:      fmt.Sprintf("ASN of %s unknown (%s): cannot confirm it is independent", ep.Name, why),
	}, true
}

func poolWarning(eps []EndpointIndependence, order []int, count int) Warning {
	names := make([]string, 0, len(order))
	for _, i := range order {
		names = append(names, eps[i].Name)
	}
	text := "only one failure domain: a single outage can take every endpoint"
	if count == 0 {
		text = "no endpoints: nothing to fail over to"
	}
	return Warning{Endpoints: names, Reason: ReasonPool, Text: text}
}

// twoDomainsWarning is advice, not a fault: two domains fail over, but
// while one is out the other has no independent partner (the failover seed
// plans for three). It names no endpoint: it is about the whole pool, so
// no endpoint is shown as sharing fate for it.
func twoDomainsWarning() Warning {
	return Warning{
		Reason: ReasonTwoDomains,
		Text: "only two failure domains: while one is out, every request rides on the other with no independent endpoint to fail over " +
			"or hedge to; a third (another provider in another region) keeps failover and hedging through an outage",
	}
}

func find(parent []int, i int) int {
	for parent[i] != i {
		parent[i] = parent[parent[i]]
		i = parent[i]
	}
	return i
}

func union(parent []int, i, j int) {
	ri, rj := find(parent, i), find(parent, j)
	if ri != rj {
		parent[max(ri, rj)] = min(ri, rj)
	}
}

// intersect returns the common elements of two sorted, duplicate-free slices.
func intersect[T cmp.Ordered](a, b []T) []T {
	var out []T
	for len(a) > 0 && len(b) > 0 {
		switch c := cmp.Compare(a[0], b[0]); {
		case c < 0:
			a = a[1:]
		case c > 0:
			b = b[1:]
		default:
			out = append(out, a[0])
			a, b = a[1:], b[1:]
		}
	}
	return out
}

func joinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
