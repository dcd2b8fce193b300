package probes

import (
	"maps"
	"reflect"
	"slices"
	"testing"
)

// ep builds an endpoint; ips are "ip" (ASN off), "ip@asn" (known ASN) or
// "ip!reason" (lookup failed).
func ep(name, provider, region, leaf string, ips ...string) EndpointIndependence {
	e := EndpointIndependence{Name: name, Provider: provider, Region: region}
	for _, s := range ips {
		info := IPInfo{IP: s}
		for i := range len(s) {
			switch s[i] {
			case '@':
				info.IP = s[:i]
				info.ASN = asnByNumber[s[i+1:]]
			case '!':
				info.IP, info.ASNError = s[:i], s[i+1:]
			default:
				continue
			}
			break
		}
		e.IPs = append(e.IPs, info)
	}
	if leaf != "" {
		e.TLS = &TLSInfo{IssuerOrg: "Test CA One", LeafFingerprint: leaf}
	}
	return e
}

var asnByNumber = map[string]*ASN{
	"64500": {Number: 64500, Name: "Example Networks"},
	"64501": {Number: 64501},
	"64510": {Number: 64510, Name: "Other Hosting"},
	"64520": {Number: 64520},
}

func reasons(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Reason + ":" + joinAnd(w.Endpoints)
	}
	return out
}

func TestGroupDomains(t *testing.T) {
	leafA := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	cases := []struct {
		name     string
		eps      []EndpointIndependence
		domains  map[string]string
		count    int
		warnings []string // reason:endpoints
	}{
		{
			name:     "independent endpoints are separate domains",
			eps:      []EndpointIndependence{ep("gamma", "p2", "eu", "", "203.0.113.5@64510"), ep("alpha", "p1", "us", "", "198.51.100.10@64500")},
			domains:  map[string]string{"alpha": "d1", "gamma": "d2"},
			count:    2,
			warnings: []string{"two-domains:"},
		},
		{
			name:     "shared IP, no repeated /24",
			eps:      []EndpointIndependence{ep("beta", "", "", "", "127.0.0.1!private address"), ep("alpha", "", "", "", "127.0.0.1!private address")},
			domains:  map[string]string{"alpha": "d1", "beta": "d1"},
			count:    1,
			warnings: []string{"ip:alpha and beta", "asn-unknown:alpha", "asn-unknown:beta", "pool:alpha and beta"},
		},
		{
			name:     "shared IPv4 /24",
			eps:      []EndpointIndependence{ep("alpha", "", "", "", "198.51.100.10@64500"), ep("beta", "", "", "", "198.51.100.20@64510")},
			domains:  map[string]string{"alpha": "d1", "beta": "d1"},
			count:    1,
			warnings: []string{"prefix24:alpha and beta", "pool:alpha and beta"},
		},
		{
			name:     "shared IPv6 /48",
			eps:      []EndpointIndependence{ep("delta", "", "", "", "2001:db8:1::1@64501"), ep("eps", "", "", "", "2001:db8:1:ffff::2@64510"), ep("zeta", "", "", "", "2001:db8:2::1@64500")},
			domains:  map[string]string{"delta": "d1", "eps": "d1", "zeta": "d2"},
			count:    2,
			warnings: []string{"prefix48:delta and eps", "two-domains:"},
		},
		{
			name:     "shared ASN",
			eps:      []EndpointIndependence{ep("alpha", "", "", "", "198.51.100.10@64500"), ep("zeta", "", "", "", "192.0.2.7@64500")},
			domains:  map[string]string{"alpha": "d1", "zeta": "d1"},
			count:    1,
			warnings: []string{"asn:alpha and zeta", "pool:alpha and zeta"},
		},
		{
			name:     "shared leaf certificate",
			eps:      []EndpointIndependence{ep("alpha", "", "", leafA, "198.51.100.10@64500"), ep("gamma", "", "", leafA, "203.0.113.5@64510")},
			domains:  map[string]string{"alpha": "d1", "gamma": "d1"},
			count:    1,
			warnings: []string{"tls-leaf:alpha and gamma", "pool:alpha and gamma"},
		},
		{
			name: "provider and region, case folded; the provider alone or the region alone counts",
			eps: []EndpointIndependence{
				ep("alpha", "Provider-1", "us-east", "", "198.51.100.10@64500"),
				ep("gamma", "provider-1", "US-East ", "", "203.0.113.5@64510"),
				ep("theta", "provider-1", "", "", "192.0.2.7@64501"),
				ep("iota", "", "us-east", "", "2001:db8:9::1@64520"),
			},
			domains: map[string]string{"alpha": "d1", "gamma": "d1", "iota": "d1", "theta": "d1"},
			count:   1,
			warnings: []string{"provider-region:alpha and gamma", "provider-region:alpha and iota", "provider-region:alpha and theta",
				"provider-region:gamma and iota", "provider-region:gamma and theta", "pool:alpha, gamma, iota and theta"},
		},
		{
			name:     "unknown ASN is warned, and unresolved endpoints too",
			eps:      []EndpointIndependence{ep("alpha", "", "", "", "198.51.100.10@64500"), ep("gamma", "", "", "", "203.0.113.5!lookup failed: SERVFAIL"), {Name: "omega", ResolveError: "omega.test: no such name (NXDOMAIN)"}},
			domains:  map[string]string{"alpha": "d1", "gamma": "d2", "omega": "d3"},
			count:    3,
			warnings: []string{"asn-unknown:gamma", "asn-unknown:omega"},
		},
		{
			name:     "ASN lookups off: no unknown warnings",
			eps:      []EndpointIndependence{ep("alpha", "", "", "", "198.51.100.10"), ep("gamma", "", "", "", "203.0.113.5")},
			domains:  map[string]string{"alpha": "d1", "gamma": "d2"},
			count:    2,
			warnings: []string{"two-domains:"},
		},
		{
			name:     "no endpoints",
			domains:  map[string]string{},
			warnings: []string{"pool:"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			domains, count, warnings := GroupDomains(c.eps)
			if !maps.Equal(domains, c.domains) || count != c.count {
				t.Errorf("domains %v (%d), want %v (%d)", domains, count, c.domains, c.count)
			}
			if got := reasons(warnings); !slices.Equal(got, c.warnings) && !(len(got) == 0 && len(c.warnings) == 0) {
				t.Errorf("warnings\n got %q\nwant %q", got, c.warnings)
			}
		})
	}
}

func TestGroupDomains_TransitiveSharingIsOneDomain(t *testing.T) {
	eps := []EndpointIndependence{
		ep("alpha", "", "", "", "198.51.100.10@64500"),
		ep("beta", "p1", "eu", "", "192.0.2.7@64500"),
		ep("gamma", "p1", "eu", "", "203.0.113.5@64510"),
		ep("delta", "", "", "", "2001:db8:5::1@64501"),
	}
	domains, count, warnings := GroupDomains(eps)
	want := map[string]string{"alpha": "d1", "beta": "d1", "gamma": "d1", "delta": "d2"}
	if !maps.Equal(domains, want) || count != 2 {
		t.Fatalf("domains %v (%d), want %v", domains, count, want)
	}
	if got := reasons(warnings); !slices.Equal(got, []string{"asn:alpha and beta", "provider-region:beta and gamma", "two-domains:"}) {
		t.Fatalf("warnings %q", got)
	}
}

func TestGroupDomains_TextNamesEndpointsAndWhatTheyShare(t *testing.T) {
	eps := []EndpointIndependence{
		ep("zeta", "", "", "", "192.0.2.7@64500"),
		ep("alpha", "provider-1", "us-east", "abcdef0123456789abcdef", "198.51.100.10@64500"),
		ep("beta", "provider-1", "us-east", "abcdef0123456789abcdef", "198.51.100.20@64501", "2001:db8:1::1@64501"),
		ep("gamma", "", "", "", "203.0.113.5!lookup failed: TXT query: server answered SERVFAIL"),
		ep("delta", "", "", "", "2001:db8:1::2@64501"),
	}
	_, _, warnings := GroupDomains(eps)
	want := []string{
		"alpha and beta share the IPv4 network 198.51.100.0/24: likely one site or load balancer, one outage can take both",
		"alpha and beta present the same TLS certificate (sha256 abcdef012345…): likely one server or load balancer, one outage takes both",
		"alpha and beta are both provider-1 in us-east: one provider or region outage takes both",
		"alpha and zeta share AS64500 (Example Networks): one outage takes both",
		"beta and delta share the IPv6 network 2001:db8:1::/48: likely one site or load balancer, one outage can take both",
		"beta and delta share AS64501: one outage takes both",
		"ASN of gamma unknown (lookup failed: TXT query: server answered SERVFAIL): cannot confirm it is independent",
		"only two failure domains: while one is out, every request rides on the other with no independent endpoint to fail over " +
			"or hedge to; a third (another provider in another region) keeps failover and hedging through an outage",
	}
	var got []string
	for _, w := range warnings {
		got = append(got, w.Text)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("warnings\n got %q\nwant %q", got, want)
	}
}

func TestGroupDomains_DoesNotDependOnInputOrder(t *testing.T) {
	eps := []EndpointIndependence{
		ep("alpha", "p1", "us", "", "198.51.100.10@64500"),
		ep("beta", "p1", "us", "", "198.51.100.20@64500"),
		ep("gamma", "", "", "", "203.0.113.5!lookup failed"),
		ep("delta", "", "", "", "2001:db8:1::1@64501"),
		ep("eps", "", "", "", "127.0.0.1!private address"),
		ep("zeta", "", "", "", "127.0.0.1!private address"),
	}
	d1, n1, w1 := GroupDomains(eps)
	reversed := slices.Clone(eps)
	slices.Reverse(reversed)
	d2, n2, w2 := GroupDomains(reversed)
	if !maps.Equal(d1, d2) || n1 != n2 || !reflect.DeepEqual(w1, w2) {
		t.Fatalf("order changed the result:\n%v %d %v\n%v %d %v", d1, n1, w1, d2, n2, w2)
	}
}

// The failover seed's planning rule: endpoints that share a provider, or a
// region, share a blast radius and are one failure domain, though nothing
// else (IP, network, AS, certificate) ties them.
func TestGroupDomains_SameProviderOrSameRegionIsOneDomain(t *testing.T) {
	cases := []struct {
		name     string
		eps      []EndpointIndependence
		domains  map[string]string
		count    int
		warnings []string // texts
	}{
		{
			name: "one provider in two regions",
			eps: []EndpointIndependence{
				ep("infura-us", "infura", "us-east", "", "198.51.100.10@64500"),
				ep("infura-eu", "Infura", "eu-west", "", "203.0.113.5@64510"),
				ep("quicknode", "quicknode", "ap-south", "", "192.0.2.7@64501"),
			},
			domains:  map[string]string{"infura-eu": "d1", "infura-us": "d1", "quicknode": "d2"},
			count:    2,
			warnings: []string{"infura-eu and infura-us have the same provider Infura: one provider outage takes both, whatever their regions"},
		},
		{
			name: "two providers in one region",
			eps: []EndpointIndependence{
				ep("infura", "infura", "us-east", "", "198.51.100.10@64500"),
				ep("alchemy", "alchemy", "US-East", "", "203.0.113.5@64510"),
				ep("quicknode", "quicknode", "ap-south", "", "192.0.2.7@64501"),
			},
			domains:  map[string]string{"alchemy": "d1", "infura": "d1", "quicknode": "d2"},
			count:    2,
			warnings: []string{"alchemy and infura are in the same region US-East: one regional outage takes both, whatever their providers"},
		},
		{
			name: "a provider and a region chain three endpoints into one domain",
			eps: []EndpointIndependence{
				ep("a", "infura", "us-east", "", "198.51.100.10@64500"),
				ep("b", "infura", "eu-west", "", "203.0.113.5@64510"),
				ep("c", "alchemy", "eu-west", "", "192.0.2.7@64501"),
			},
			domains: map[string]string{"a": "d1", "b": "d1", "c": "d1"},
			count:   1,
			warnings: []string{
				"a and b have the same provider infura: one provider outage takes both, whatever their regions",
				"b and c are in the same region eu-west: one regional outage takes both, whatever their providers",
				"only one failure domain: a single outage can take every endpoint",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			domains, count, warnings := GroupDomains(c.eps)
			if !maps.Equal(domains, c.domains) || count != c.count {
				t.Errorf("domains %v (%d), want %v (%d)", domains, count, c.domains, c.count)
			}
			var got []string
			for _, w := range warnings {
				if w.Reason == ReasonProviderRegion || w.Reason == ReasonPool {
					got = append(got, w.Text)
				}
			}
			if !slices.Equal(got, c.warnings) {
				t.Errorf("warnings\n got %q\nwant %q", got, c.warnings)
			}
		})
	}
}

// The failover seed wants at least two independent failure domains, and
// three at best: two is advice about the whole pool (after every other
// warning, naming no endpoint, so none reads as sharing fate for it),
// fewer than two is the pool warning, three or more says nothing.
func TestGroupDomains_ExactlyTwoDomainsIsAdvice(t *testing.T) {
	one := ep("alpha", "p1", "us-east", "", "198.51.100.10@64500")
	two := ep("beta", "p2", "eu-west", "", "203.0.113.5@64510")
	three := ep("gamma", "p3", "ap-south", "", "192.0.2.7@64501")
	shared := ep("delta", "p1", "", "", "2001:db8:9::1@64520") // alpha's provider
	for _, tc := range []struct {
		name string
		eps  []EndpointIndependence
		want []string
	}{
		{"one domain", []EndpointIndependence{one, shared}, []string{"provider-region:alpha and delta", "pool:alpha and delta"}},
		{"two domains", []EndpointIndependence{one, two}, []string{"two-domains:"}},
		{"two domains, one of them shared", []EndpointIndependence{one, two, shared}, []string{"provider-region:alpha and delta", "two-domains:"}},
		{"three domains", []EndpointIndependence{one, two, three}, nil},
		{"three domains, one of them shared", []EndpointIndependence{one, two, three, shared}, []string{"provider-region:alpha and delta"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, warnings := GroupDomains(tc.eps)
			if got := reasons(warnings); !slices.Equal(got, tc.want) {
				t.Fatalf("warnings %q, want %q", got, tc.want)
			}
			for _, w := range warnings {
				if w.Reason == "two-domains" && w.Text != "only two failure domains: while one is out, every request rides on the other "+
					"with no independent endpoint to fail over or hedge to; a third (another provider in another region) keeps failover and hedging through an outage" {
					t.Fatalf("text %q", w.Text)
				}
			}
		})
	}
}
