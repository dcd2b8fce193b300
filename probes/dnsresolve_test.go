package probes

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func addrStrings(addrs []netip.Addr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

func TestServerDNS_LookupIPReturnsEveryAAndAAAASorted(t *testing.T) {
	f := startFakeDNS(t)
	f.a("multi.test", "198.51.100.20", "198.51.100.10")
	f.aaaa("multi.test", "2001:db8:1::2", "2001:db8:1::1")
	f.a("v6only.test")
	f.aaaa("v6only.test", "2001:db8:2::1")
	d := &serverDNS{server: f.addr, timeout: 2 * time.Second}

	got, err := d.lookupIP(context.Background(), "multi.test")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"198.51.100.10", "198.51.100.20", "2001:db8:1::1", "2001:db8:1::2"}
	if !slices.Equal(addrStrings(got), want) {
		t.Fatalf("addresses = %v, want %v", addrStrings(got), want)
	}

	got, err = d.lookupIP(context.Background(), "v6only.test")
	if err != nil || !slices.Equal(addrStrings(got), []string{"2001:db8:2::1"}) {
		t.Fatalf("v6only = %v, %v", addrStrings(got), err)
	}
}

func TestServerDNS_FollowsCNAMEInAnswer(t *testing.T) {
	f := startFakeDNS(t)
	f.add(&dns.CNAME{Hdr: dns.RR_Header{Name: "rpc.test.", Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60}, Target: "edge.test."})
	f.add(&dns.A{Hdr: dns.RR_Header{Name: "rpc.test.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: mustAddr(t, "192.0.2.9").AsSlice()})
	d := &serverDNS{server: f.addr, timeout: 2 * time.Second}
	got, err := d.lookupIP(context.Background(), "rpc.test")
	if err != nil || !slices.Equal(addrStrings(got), []string{"192.0.2.9"}) {
		t.Fatalf("got %v, %v", addrStrings(got), err)
	}
}

func TestServerDNS_Errors(t *testing.T) {
	f := startFakeDNS(t)
	f.txt("empty.test", "not an address")
	f.rcode("broken.test", dns.TypeA, dns.RcodeServerFailure)
	f.rcode("broken.test", dns.TypeAAAA, dns.RcodeServerFailure)
	d := &serverDNS{server: f.addr, timeout: 2 * time.Second}

	_, err := d.lookupIP(context.Background(), "missing.test")
	if !errors.Is(err, errNotFound) {
		t.Errorf("missing: err = %v, want NXDOMAIN", err)
	}
	_, err = d.lookupIP(context.Background(), "empty.test")
	if err == nil || !strings.Contains(err.Error(), "no A or AAAA") {
		t.Errorf("empty: err = %v", err)
	}
	_, err = d.lookupIP(context.Background(), "broken.test")
	if err == nil || errors.Is(err, errNotFound) || !strings.Contains(err.Error(), "SERVFAIL") {
		t.Errorf("broken: err = %v, want SERVFAIL", err)
	}
}

func TestServerDNS_TimesOutOnSilentServer(t *testing.T) {
	f := startFakeDNS(t)
	f.silence("slow.test", dns.TypeTXT)
	d := &serverDNS{server: f.addr, timeout: 100 * time.Millisecond}
	_, err := d.lookupTXT(context.Background(), "slow.test")
	if err == nil || errors.Is(err, errNotFound) {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

func TestServerDNS_RetriesTruncatedAnswerOverTCP(t *testing.T) {
	f := startFakeDNS(t)
	f.setTruncateUDP(true)
	f.txt("big.test", "part one", "part two")
	d := &serverDNS{server: f.addr, timeout: 2 * time.Second}
	got, err := d.lookupTXT(context.Background(), "big.test")
	if err != nil || !slices.Equal(got, []string{"part one", "part two"}) {
		t.Fatalf("got %q, %v", got, err)
	}
	want := []string{"big.test./TXT/udp", "big.test./TXT/tcp"}
	if q := f.log(); !slices.Equal(q, want) {
		t.Fatalf("queries %v, want %v", q, want)
	}
}
