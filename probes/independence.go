package probes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// Target is one endpoint to check. URL may hold credentials: it never
// appears in a Report or an error; Name stands for the endpoint.
type Target struct {
	Name, URL, Provider, Region string
	// Proxied: rpcdash reaches the endpoint through a proxy
	// ([[endpoints]] proxy), while these checks resolve and dial directly.
	Proxied bool
}

// ASN is the autonomous system that announces an address.
type ASN struct {
	Number  uint32
	Name    string
	Prefix  string
	Country string
}

// IPInfo is one resolved address of an endpoint. ASN nil means unknown:
// ASNError says why, and is empty only when ASN lookups are switched off.
type IPInfo struct {
	IP       string
	ASN      *ASN
	ASNError string
}

// TLSInfo describes the certificate an endpoint presents. The issuer is
// reported even when the chain does not verify; Error then says so.
type TLSInfo struct {
	IssuerOrg, IssuerCN string
	LeafFingerprint     string // sha256 of the leaf, lower-case hex
	Error               string
}

// EndpointIndependence is what was learnt about one endpoint.
type EndpointIndependence struct {
	Name, Provider, Region string
	Host                   string
	IPs                    []IPInfo
	TLS                    *TLSInfo // nil for plain http and ws
	ResolveError           string
	CheckedAt              time.Time
}

// Warning is one reason endpoints share fate, in words an operator reads.
type Warning struct {
	Endpoints []string
	Reason    string // one of the Reason* constants
	Text      string
}

// Warning reasons.
const (
	ReasonIP             = "ip"
	ReasonPrefix24       = "prefix24"
	ReasonPrefix48       = "prefix48"
	ReasonASN            = "asn"
	ReasonTLSLeaf        = "tls-leaf"
	ReasonProviderRegion = "provider-region" // the same provider, the same region, or both
	ReasonASNUnknown     = "asn-unknown"
	ReasonPool           = "pool"        // fewer than two failure domains
	ReasonTwoDomains     = "two-domains" // exactly two: advice, names no endpoint
)

// Report groups endpoints into failure domains.
type Report struct {
	Endpoints   []EndpointIndependence
	Domains     map[string]string // endpoint name → failure-domain id ("d1", "d2", …)
	DomainCount int
	Warnings    []Warning
}

// ASN lookup modes of CheckerOptions.ASN.
const (
	ASNCymru = "cymru"
	ASNDB    = "db"
	ASNOff   = "off"
)

// CheckerOptions configures a Checker.
type CheckerOptions struct {
	// Resolver is "host:port" (or "host", port 53) of the DNS server used for
	// A/AAAA and Team Cymru TXT queries; "" uses the system resolver.
	Resolver string
	// ASN is "cymru" (default when empty), "db" or "off".
	ASN string
	// ASNDB is the MaxMind-format ASN database read when ASN is "db".
	ASNDB string
	// Timeout bounds each DNS query and each TLS handshake; 0 means 5s.
	Timeout time.Duration
	// TLSConfig supplies roots (tests); nil verifies against system roots.
	TLSConfig *tls.Config
}

const (
	defaultCheckTimeout = 5 * time.Second
	checkParallelism    = 8
)

// Checker resolves endpoints, reads their ASN and TLS certificate, and groups
// them into failure domains. It is safe for concurrent use.
type Checker struct {
	dns     dnsClient
	asn     asnSource // nil when off
	timeout time.Duration
	tls     *tls.Config
	now     func() time.Time
}

// NewChecker validates opts and returns a Checker; an ASN database is read
// here, so a bad path is a start-up error.
func NewChecker(opts CheckerOptions) (*Checker, error) {
	c := &Checker{timeout: opts.Timeout, tls: opts.TLSConfig, now: time.Now}
	if c.timeout < 0 {
		return nil, errors.New("probes: independence timeout must not be negative")
	}
	if c.timeout == 0 {
		c.timeout = defaultCheckTimeout
	}
	if opts.Resolver == "" {
		c.dns = systemDNS{timeout: c.timeout}
	} else {
		server, err := resolverAddr(opts.Resolver)
		if err != nil {
			return nil, fmt.Errorf("probes: resolver: %w", err)
		}
		c.dns = &serverDNS{server: server, timeout: c.timeout}
	}
	switch opts.ASN {
	case "", ASNCymru:
		c.asn = &cymruSource{dns: c.dns}
	case ASNDB:
		src, err := openASNDB(opts.ASNDB)
		if err != nil {
			return nil, err
		}
		c.asn = src
	case ASNOff:
	default:
		return nil, fmt.Errorf("probes: asn mode %q is not one of cymru, db, off", opts.ASN)
	}
	return c, nil
}

// Check inspects every target and returns the grouped report. Endpoints keep
// the order of targets; failures are recorded in the report, never returned.
func (c *Checker) Check(ctx context.Context, targets []Target) Report {
	eps := make([]EndpointIndependence, len(targets))
	addrs := make([][]netip.Addr, len(targets))
	forEach(len(targets), checkParallelism, func(i int) {
		eps[i], addrs[i] = c.checkEndpoint(ctx, targets[i])
	})

	c.fillASNs(ctx, eps, addrs)
	domains, count, warnings := GroupDomains(eps)
	return Report{Endpoints: eps, Domains: domains, DomainCount: count, Warnings: warnings}
}

func (c *Checker) checkEndpoint(ctx context.Context, t Target) (EndpointIndependence, []netip.Addr) {
	ep := EndpointIndependence{Name: t.Name, Provider: t.Provider, Region: t.Region, CheckedAt: c.now()}
	red := newRedactor(t.URL)

	ref, err := parseEndpointURL(t.URL)
	if err != nil {
		ep.ResolveError = err.Error()
		return ep, nil
	}
	ep.Host = ref.host

	addrs, err := c.resolve(ctx, ref.host)
	if err != nil {
		ep.ResolveError = red.clean(err.Error())
	}
	for _, a := range addrs {
		ep.IPs = append(ep.IPs, IPInfo{IP: a.String()})
	}
	if ref.tls {
		info := c.readTLS(ctx, ref, addrs)
		info.Error = red.clean(info.Error)
		if info.Error != "" && t.Proxied {
			// Behind a proxy that is the only way out the direct dial
			// fails; say so rather than leave a bare timeout.
			info.Error += " (the endpoint is reached through a proxy; this check dials it directly)"
		}
		ep.TLS = &info
	}
	return ep, addrs
}

func (c *Checker) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	return c.dns.lookupIP(ctx, host)
}

// fillASNs looks up each distinct address once, however many endpoints
// share it.
func (c *Checker) fillASNs(ctx context.Context, eps []EndpointIndependence, addrs [][]netip.Addr) {
	if c.asn == nil {
		return
	}
	seen := map[netip.Addr]bool{}
	var public []netip.Addr
	for _, list := range addrs {
		for _, a := range list {
			if !seen[a] && !isPrivateAddr(a) {
				seen[a] = true
				public = append(public, a)
			}
		}
	}
	results := c.asn.lookup(ctx, public)
	for i, list := range addrs {
		for j, a := range list {
			info := &eps[i].IPs[j]
			if isPrivateAddr(a) {
				info.ASNError = "private address"
				continue
			}
			r := results[a]
			if r.err != nil {
				info.ASNError = r.err.Error()
				continue
			}
			asn := r.asn
			info.ASN = &asn
		}
	}
}

// forEach runs fn(0..n-1) with at most limit calls at once and returns when
// all have finished.
func forEach(n, limit int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(i)
		}()
	}
	wg.Wait()
}

// isPrivateAddr reports addresses no public routing table knows.
func isPrivateAddr(a netip.Addr) bool {
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalMulticast()
}
