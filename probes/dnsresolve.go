package probes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// errNotFound is a definite "this name does not exist" (NXDOMAIN), as opposed
// to a lookup that failed.
var errNotFound = errors.New("no such name (NXDOMAIN)")

// dnsClient is the little DNS the independence check needs.
type dnsClient interface {
	// lookupIP returns every A and AAAA address of host, IPv4 first, each
	// family sorted.
	lookupIP(ctx context.Context, host string) ([]netip.Addr, error)
	// lookupTXT returns each TXT record of name as one string.
	lookupTXT(ctx context.Context, name string) ([]string, error)
}

// serverDNS asks one configured DNS server, over UDP with TCP on truncation.
type serverDNS struct {
	server  string
	timeout time.Duration
}

func (d *serverDNS) lookupIP(ctx context.Context, host string) ([]netip.Addr, error) {
	type result struct {
		addrs []netip.Addr
		err   error
	}
	var v4, v6 result
	done := make(chan struct{})
	go func() {
		defer close(done)
		v6.addrs, v6.err = d.addrs(ctx, host, dns.TypeAAAA)
	}()
	v4.addrs, v4.err = d.addrs(ctx, host, dns.TypeA)
	<-done

	addrs := append(v4.addrs, v6.addrs...)
	switch {
	case len(addrs) > 0:
		return addrs, nil
	case v4.err == nil && v6.err == nil:
		return nil, fmt.Errorf("%s has no A or AAAA records", host)
	case errors.Is(v4.err, errNotFound) && errors.Is(v6.err, errNotFound):
		return nil, fmt.Errorf("%s: %w", host, errNotFound)
	case v4.err != nil && !errors.Is(v4.err, errNotFound):
		return nil, fmt.Errorf("%s: %w", host, v4.err)
	default:
		return nil, fmt.Errorf("%s: %w", host, v6.err)
	}
}

func (d *serverDNS) addrs(ctx context.Context, host string, qtype uint16) ([]netip.Addr, error) {
	answer, err := d.query(ctx, host, qtype)
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, rr := range answer {
		var ip net.IP
		switch rr := rr.(type) {
		case *dns.A:
			ip = rr.A
		case *dns.AAAA:
			ip = rr.AAAA
		default:
			continue // CNAMEs on the way
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, a)
		}
	}
	return uniqueAddrs(out), nil
}

// uniqueAddrs unmaps IPv4-in-IPv6 addresses and sorts them, IPv4 first,
// without repeats.
func uniqueAddrs(addrs []netip.Addr) []netip.Addr {
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	return slices.Compact(addrs)
}

func (d *serverDNS) lookupTXT(ctx context.Context, name string) ([]string, error) {
	answer, err := d.query(ctx, name, dns.TypeTXT)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range answer {
		if txt, ok := rr.(*dns.TXT); ok {
			out = append(out, strings.Join(txt.Txt, ""))
		}
	}
	return out, nil
}

func (d *serverDNS) query(ctx context.Context, name string, qtype uint16) ([]dns.RR, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	c := &dns.Client{Net: "udp", Timeout: d.timeout}
	r, _, err := c.ExchangeContext(ctx, m, d.server)
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.ExchangeContext(ctx, m, d.server)
	}
	if err != nil {
		return nil, fmt.Errorf("%s query failed: %w", dns.TypeToString[qtype], err)
	}
	switch r.Rcode {
	case dns.RcodeSuccess:
		return r.Answer, nil
	case dns.RcodeNameError:
		return nil, errNotFound
	default:
		return nil, fmt.Errorf("%s query: server answered %s", dns.TypeToString[qtype], dns.RcodeToString[r.Rcode])
	}
}

// systemDNS uses the operating system's resolver configuration.
type systemDNS struct{ timeout time.Duration }

func (d systemDNS) lookupIP(ctx context.Context, host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, systemDNSError(err)
	}
	return uniqueAddrs(addrs), nil
}

func (d systemDNS) lookupTXT(ctx context.Context, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	txt, err := net.DefaultResolver.LookupTXT(ctx, name)
	if err != nil {
		return nil, systemDNSError(err)
	}
	return txt, nil
}

func systemDNSError(err error) error {
	var de *net.DNSError
	if errors.As(err, &de) && de.IsNotFound {
		return fmt.Errorf("%s: %w", de.Name, errNotFound)
	}
	return err
}
