package probes

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestCymruOriginName(t *testing.T) {
	cases := map[string]string{
		"198.51.100.10":        "10.100.51.198.origin.asn.cymru.com",
		"::ffff:192.0.2.1":     "1.2.0.192.origin.asn.cymru.com",
		"2001:db8:1::1":        "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.0.8.b.d.0.1.0.0.2.origin6.asn.cymru.com",
		"2606:4700:4700::1111": "1.1.1.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.7.4.0.0.7.4.6.0.6.2.origin6.asn.cymru.com",
	}
	for ip, want := range cases {
		if got := cymruOriginName(mustAddr(t, ip)); got != want {
			t.Errorf("%s → %s, want %s", ip, got, want)
		}
	}
}

func TestParseCymruOrigin(t *testing.T) {
	got, err := parseCymruOrigin([]string{
		"13335 | 104.16.0.0/12 | US | arin | 2014-03-28",
		"209242 13335 | 104.16.0.0/13 | US | arin | 2014-03-28",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := ASN{Number: 209242, Prefix: "104.16.0.0/13", Country: "US"}
	if got != want {
		t.Fatalf("got %+v, want %+v (most specific prefix, first listed AS)", got, want)
	}
	if _, err := parseCymruOrigin([]string{"garbage"}); err == nil {
		t.Fatal("garbage record parsed")
	}
	if _, err := parseCymruOrigin(nil); err == nil {
		t.Fatal("empty answer parsed")
	}
}

func TestParseCymruName(t *testing.T) {
	got := parseCymruName([]string{"13335 | US | arin | 2010-07-14 | CLOUDFLARENET - Cloudflare, Inc., US"})
	if got != "CLOUDFLARENET - Cloudflare, Inc." {
		t.Fatalf("got %q", got)
	}
	if got := parseCymruName([]string{"13335 | US | arin"}); got != "" {
		t.Fatalf("short record gave %q", got)
	}
}

func TestCymruSource_LooksUpEachAddressAndASNameOnce(t *testing.T) {
	f := startFakeDNS(t)
	f.cymru(t, "198.51.100.10", "64500 | 198.51.100.0/24 | US | arin | 2020-01-01")
	f.cymru(t, "198.51.100.20", "64500 | 198.51.100.0/24 | US | arin | 2020-01-01")
	f.cymru(t, "2001:db8:1::1", "64501 | 2001:db8::/32 | DE | ripencc | 2020-01-01")
	f.asName(64500, "US", "EXAMPLE-NET - Example Networks")
	f.rcode("AS64501.asn.cymru.com", dns.TypeTXT, dns.RcodeServerFailure)
	f.rcode(cymruOriginName(mustAddr(t, "203.0.113.5")), dns.TypeTXT, dns.RcodeServerFailure)

	src := &cymruSource{dns: &serverDNS{server: f.addr, timeout: 2 * time.Second}}
	addrs := []string{"198.51.100.10", "198.51.100.20", "2001:db8:1::1", "203.0.113.5", "192.0.2.99"}
	var list = make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		list = append(list, mustAddr(t, a))
	}
	got := src.lookup(context.Background(), list)

	if r := got[mustAddr(t, "198.51.100.20")]; r.err != nil ||
		r.asn != (ASN{Number: 64500, Name: "EXAMPLE-NET - Example Networks", Prefix: "198.51.100.0/24", Country: "US"}) {
		t.Errorf("198.51.100.20: %+v %v", r.asn, r.err)
	}
	if r := got[mustAddr(t, "2001:db8:1::1")]; r.err != nil || r.asn.Number != 64501 || r.asn.Name != "" || r.asn.Country != "DE" {
		t.Errorf("v6 with failing name lookup: %+v %v", r.asn, r.err)
	}
	if r := got[mustAddr(t, "203.0.113.5")]; r.err == nil || !strings.Contains(r.err.Error(), "lookup failed") || !strings.Contains(r.err.Error(), "SERVFAIL") {
		t.Errorf("SERVFAIL: err = %v", r.err)
	}
	if r := got[mustAddr(t, "192.0.2.99")]; r.err == nil || !strings.Contains(r.err.Error(), "no origin AS") {
		t.Errorf("NXDOMAIN: err = %v", r.err)
	}
	if n := f.count("AS64500.asn.cymru.com", dns.TypeTXT); n != 1 {
		t.Errorf("AS64500 name queried %d times, want 1", n)
	}
}

func TestDBSource_ReadsMaxMindASNDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "asn.mmdb")
	db := writeTestMMDB(t, []mmdbASN{
		{prefix: "198.51.100.0/24", asn: 64500, org: "Example Networks"},
		{prefix: "203.0.113.0/25", asn: 64510, org: "Other Hosting"},
		{prefix: "2001:db8:1::/48", asn: 64501, org: "Example Six"},
	})
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := openASNDB(path)
	if err != nil {
		t.Fatal(err)
	}
	got := src.lookup(context.Background(), []netip.Addr{
		mustAddr(t, "198.51.100.20"), mustAddr(t, "203.0.113.5"), mustAddr(t, "2001:db8:1::1"), mustAddr(t, "192.0.2.1"),
	})
	checks := []struct {
		ip   string
		want ASN
	}{
		{"198.51.100.20", ASN{Number: 64500, Name: "Example Networks", Prefix: "198.51.100.0/24"}},
		{"203.0.113.5", ASN{Number: 64510, Name: "Other Hosting", Prefix: "203.0.113.0/25"}},
		{"2001:db8:1::1", ASN{Number: 64501, Name: "Example Six", Prefix: "2001:db8:1::/48"}},
	}
	for _, c := range checks {
		if r := got[mustAddr(t, c.ip)]; r.err != nil || r.asn != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.ip, r.asn, r.err, c.want)
		}
	}
	if r := got[mustAddr(t, "192.0.2.1")]; r.err == nil || !strings.Contains(r.err.Error(), "not in the ASN database") {
		t.Errorf("192.0.2.1: err = %v", r.err)
	}
}

func TestOpenASNDB_Errors(t *testing.T) {
	if _, err := openASNDB(""); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := openASNDB(filepath.Join(t.TempDir(), "missing.mmdb")); err == nil {
		t.Error("missing file accepted")
	}
	junk := filepath.Join(t.TempDir(), "junk.mmdb")
	if err := os.WriteFile(junk, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openASNDB(junk); err == nil || !strings.Contains(err.Error(), "not a MaxMind DB") {
		t.Errorf("junk file: err = %v", err)
	}
}

// An ASN database record without an AS number (how unannounced space is
// listed) is an unknown AS, not AS0 shared by everything listed so: two
// endpoints in two such networks are two failure domains, each with its AS
// unknown, not one domain "sharing AS0".
func TestDBSource_ARecordWithoutAnASNumberIsAnUnknownAS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "asn.mmdb")
	db := writeTestMMDB(t, []mmdbASN{
		{prefix: "198.51.100.0/24", asn: 0, org: "Unannounced one"},
		{prefix: "203.0.113.0/24", asn: 0, org: "Unannounced two"},
	})
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTestChecker(t, CheckerOptions{ASN: ASNDB, ASNDB: path})
	// Plain http to addresses: nothing is dialled.
	r := c.Check(context.Background(), []Target{
		{Name: "alpha", URL: "http://198.51.100.20:8545", Provider: "p0", Region: "r0"},
		{Name: "beta", URL: "http://203.0.113.5:8545", Provider: "p1", Region: "r1"},
	})
	want := []string{"asn-unknown:alpha", "asn-unknown:beta", "two-domains:"}
	if got := reasons(r.Warnings); r.DomainCount != 2 || !slices.Equal(got, want) {
		t.Fatalf("%d domains, warnings %q; want 2 domains and %q", r.DomainCount, got, want)
	}
	if e := r.Endpoints[0].IPs[0]; e.ASN != nil || !strings.Contains(e.ASNError, "no AS number") {
		t.Fatalf("alpha's address: ASN %+v, error %q", e.ASN, e.ASNError)
	}
}
