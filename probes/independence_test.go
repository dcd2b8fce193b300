package probes

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/rpcdash/rpcdash/engine"
)

// pool is a made-up world: names resolve to documentation addresses that
// nothing ever connects to; only the in-test DNS server is asked about them.
func pool(t *testing.T) *fakeDNS {
	f := startFakeDNS(t)
	f.a("alpha.test", "198.51.100.10")
	f.a("beta.test", "198.51.100.20") // alpha's /24, another AS
	f.a("zeta.test", "192.0.2.7")     // alpha's AS
	f.a("gamma.test", "203.0.113.5")  // origin lookup SERVFAIL
	f.a("omicron.test", "198.19.0.5")
	f.aaaa("delta.test", "2001:db8:1::1")
	f.aaaa("epsilon.test", "2001:db8:1:ffff::2") // delta's /48
	f.a("kappa.test", "192.0.2.130")
	f.aaaa("kappa.test", "2001:db8:77::1")
	f.a("lambda.test", "198.18.0.1")
	f.a("lan.test", "10.1.2.3")

	f.cymru(t, "198.51.100.10", "64500 | 198.51.100.0/25 | US | arin | 2020-01-01")
	f.cymru(t, "192.0.2.7", "64500 64499 | 192.0.2.0/24 | US | arin | 2020-01-01")
	f.cymru(t, "198.51.100.20", "64502 | 198.51.100.0/24 | CA | arin | 2020-01-01")
	f.rcode(cymruOriginName(mustAddr(t, "203.0.113.5")), dns.TypeTXT, dns.RcodeServerFailure)
	// 198.19.0.5 has no origin record at all: NXDOMAIN.
	f.cymru(t, "2001:db8:1::1", "64501 | 2001:db8:1::/48 | DE | ripencc | 2020-01-01")
	f.cymru(t, "2001:db8:1:ffff::2", "64503 | 2001:db8:1:ff00::/56 | DE | ripencc | 2020-01-01")
	f.cymru(t, "192.0.2.130", "64510 | 192.0.2.128/25 | JP | apnic | 2020-01-01")
	f.cymru(t, "2001:db8:77::1", "64510 | 2001:db8:77::/48 | JP | apnic | 2020-01-01")
	f.cymru(t, "198.18.0.1", "64520 | 198.18.0.0/15 | NL | ripencc | 2020-01-01")
	f.asName(64500, "US", "EXAMPLE-NET - Example Networks")
	f.asName(64502, "CA", "MAPLE - Maple Hosting")
	f.asName(64510, "JP", "SAKURA-EX - Example Cloud")
	return f
}

func targets(names ...string) []Target {
	out := make([]Target, len(names))
	for i, n := range names {
		out[i] = Target{Name: n, URL: "http://" + n + ".test:8545/"}
	}
	return out
}

func TestCheck_GroupsByWhatEndpointsShare(t *testing.T) {
	f := pool(t)
	c := newTestChecker(t, CheckerOptions{Resolver: f.addr})
	cases := []struct {
		name     string
		targets  []Target
		domains  map[string]string
		warnings []string
	}{
		{
			name:     "shared ASN",
			targets:  targets("alpha", "zeta"),
			domains:  map[string]string{"alpha": "d1", "zeta": "d1"},
			warnings: []string{"asn:alpha and zeta", "pool:alpha and zeta"},
		},
		{
			name:     "shared /24",
			targets:  targets("alpha", "beta"),
			domains:  map[string]string{"alpha": "d1", "beta": "d1"},
			warnings: []string{"prefix24:alpha and beta", "pool:alpha and beta"},
		},
		{
			name:     "shared /48",
			targets:  targets("delta", "epsilon"),
			domains:  map[string]string{"delta": "d1", "epsilon": "d1"},
			warnings: []string{"prefix48:delta and epsilon", "pool:delta and epsilon"},
		},
		{
			name:    "independent endpoints",
			targets: targets("kappa", "alpha", "delta", "lambda"),
			domains: map[string]string{"alpha": "d1", "delta": "d2", "kappa": "d3", "lambda": "d4"},
		},
		{
			name:     "failed or empty ASN lookups are unknown, not independent",
			targets:  targets("alpha", "gamma", "omicron", "lan"),
			domains:  map[string]string{"alpha": "d1", "gamma": "d2", "lan": "d3", "omicron": "d4"},
			warnings: []string{"asn-unknown:gamma", "asn-unknown:lan", "asn-unknown:omicron"},
		},
		{
			name: "provider and region",
			targets: []Target{
				{Name: "alpha", URL: "http://alpha.test", Provider: "provider-1", Region: "us-east"},
				{Name: "kappa", URL: "http://kappa.test", Provider: "provider-1", Region: "us-east"},
				{Name: "lambda", URL: "http://lambda.test", Provider: "provider-2", Region: "eu-west"},
			},
			domains:  map[string]string{"alpha": "d1", "kappa": "d1", "lambda": "d2"},
			warnings: []string{"provider-region:alpha and kappa", "two-domains:"},
		},
		{
			name: "the same provider in another region",
			targets: []Target{
				{Name: "alpha", URL: "http://alpha.test", Provider: "provider-1", Region: "us-east"},
				{Name: "kappa", URL: "http://kappa.test", Provider: "provider-1", Region: "eu-west"},
				{Name: "lambda", URL: "http://lambda.test", Provider: "provider-2", Region: "ap-south"},
			},
			domains:  map[string]string{"alpha": "d1", "kappa": "d1", "lambda": "d2"},
			warnings: []string{"provider-region:alpha and kappa", "two-domains:"},
		},
		{
			name: "another provider in the same region",
			targets: []Target{
				{Name: "alpha", URL: "http://alpha.test", Provider: "provider-1", Region: "us-east"},
				{Name: "kappa", URL: "http://kappa.test", Provider: "provider-2", Region: "ap-south"},
				{Name: "lambda", URL: "http://lambda.test", Provider: "provider-3", Region: "us-east"},
			},
			domains:  map[string]string{"alpha": "d1", "kappa": "d2", "lambda": "d1"},
			warnings: []string{"provider-region:alpha and lambda", "two-domains:"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Check(context.Background(), tc.targets)
			if !maps.Equal(r.Domains, tc.domains) || r.DomainCount != len(slices.Compact(slices.Sorted(maps.Values(tc.domains)))) {
				t.Errorf("domains %v (%d), want %v", r.Domains, r.DomainCount, tc.domains)
			}
			if got := reasons(r.Warnings); !slices.Equal(got, tc.warnings) && len(got)+len(tc.warnings) > 0 {
				t.Errorf("warnings\n got %q\nwant %q", got, tc.warnings)
			}
		})
	}
}

func TestCheck_ReportsAddressesASNsAndErrors(t *testing.T) {
	f := pool(t)
	c := newTestChecker(t, CheckerOptions{Resolver: f.addr})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c.now = func() time.Time { return at }

	r := c.Check(context.Background(), targets("kappa", "gamma", "omicron", "lan", "nowhere"))
	kappa := r.Endpoints[0]
	want := []IPInfo{
		{IP: "192.0.2.130", ASN: &ASN{Number: 64510, Name: "SAKURA-EX - Example Cloud", Prefix: "192.0.2.128/25", Country: "JP"}},
		{IP: "2001:db8:77::1", ASN: &ASN{Number: 64510, Name: "SAKURA-EX - Example Cloud", Prefix: "2001:db8:77::/48", Country: "JP"}},
	}
	if kappa.Host != "kappa.test" || kappa.ResolveError != "" || !kappa.CheckedAt.Equal(at) || kappa.TLS != nil {
		t.Errorf("kappa = %+v", kappa)
	}
	if !reflect.DeepEqual(kappa.IPs, want) {
		t.Errorf("kappa IPs = %+v %+v %+v", kappa.IPs, *kappa.IPs[0].ASN, *kappa.IPs[1].ASN)
	}
	for name, wantErr := range map[int]string{1: "lookup failed", 2: "no origin AS", 3: "private address"} {
		ip := r.Endpoints[name].IPs[0]
		if ip.ASN != nil || !strings.Contains(ip.ASNError, wantErr) {
			t.Errorf("%s: %+v, want ASN error %q", r.Endpoints[name].Name, ip, wantErr)
		}
	}
	if e := r.Endpoints[4]; len(e.IPs) != 0 || !strings.Contains(e.ResolveError, "NXDOMAIN") {
		t.Errorf("nowhere = %+v", e)
	}
	var texts []string
	for _, w := range r.Warnings {
		texts = append(texts, w.Text)
	}
	for _, want := range []string{
		"ASN of gamma unknown (lookup failed: TXT query: server answered SERVFAIL): cannot confirm it is independent",
		"ASN of lan unknown (private address): cannot confirm it is independent",
		"ASN of nowhere unknown (address unknown: nowhere.test: no such name (NXDOMAIN)): cannot confirm it is independent",
	} {
		if !slices.Contains(texts, want) {
			t.Errorf("missing warning %q in %q", want, texts)
		}
	}
	if n := f.count("AS64510.asn.cymru.com", dns.TypeTXT); n != 1 {
		t.Errorf("AS64510 name asked %d times, want once", n)
	}
	for _, q := range f.log() {
		if strings.Contains(q, "3.2.1.10.origin") {
			t.Errorf("private address sent to Team Cymru: %s", q)
		}
	}
}

func TestCheck_ASNLookupTimesOutAsUnknown(t *testing.T) {
	f := pool(t)
	f.silence(cymruOriginName(mustAddr(t, "198.18.0.1")), dns.TypeTXT)
	c := newTestChecker(t, CheckerOptions{Resolver: f.addr, Timeout: 200 * time.Millisecond})
	r := c.Check(context.Background(), targets("lambda"))
	if ip := r.Endpoints[0].IPs[0]; ip.ASN != nil || !strings.HasPrefix(ip.ASNError, "lookup failed") {
		t.Fatalf("lambda = %+v", ip)
	}
}

func TestCheck_ASNFromDatabase(t *testing.T) {
	f := pool(t)
	path := filepath.Join(t.TempDir(), "asn.mmdb")
	db := writeTestMMDB(t, []mmdbASN{
		{prefix: "198.51.100.0/24", asn: 64500, org: "Example Networks"},
		{prefix: "192.0.2.0/24", asn: 64500, org: "Example Networks"},
	})
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTestChecker(t, CheckerOptions{Resolver: f.addr, ASN: ASNDB, ASNDB: path})
	r := c.Check(context.Background(), targets("alpha", "zeta", "gamma"))
	want := []string{"asn:alpha and zeta", "asn-unknown:gamma", "two-domains:"}
	if got := reasons(r.Warnings); !slices.Equal(got, want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
	if a := r.Endpoints[0].IPs[0].ASN; a == nil || a.Name != "Example Networks" || a.Prefix != "198.51.100.0/24" {
		t.Fatalf("alpha ASN = %+v", a)
	}
	for _, q := range f.log() {
		if strings.Contains(q, "cymru") {
			t.Fatalf("db mode asked Team Cymru: %s", q)
		}
	}
}

func TestCheck_ASNOffAsksNothing(t *testing.T) {
	f := pool(t)
	c := newTestChecker(t, CheckerOptions{Resolver: f.addr, ASN: ASNOff})
	r := c.Check(context.Background(), targets("alpha", "gamma"))
	// No asn-unknown warnings: only the advice about a pool of two domains.
	if got := reasons(r.Warnings); !slices.Equal(got, []string{"two-domains:"}) || r.DomainCount != 2 {
		t.Fatalf("report = %+v", r)
	}
	if ip := r.Endpoints[1].IPs[0]; ip.ASN != nil || ip.ASNError != "" {
		t.Fatalf("gamma = %+v", ip)
	}
	if q := f.log(); len(q) != 4 {
		t.Fatalf("queries %v, want only A and AAAA for two names", q)
	}
}

func TestCheck_SecretsInURLsNeverAppear(t *testing.T) {
	one := newTestCA(t, "Test CA One")
	port := startTLSServer(t, one.leaf(t))
	c := newTestChecker(t, CheckerOptions{ASN: ASNOff, TLSConfig: rootsOf(newTestCA(t, "Test CA Two"))})
	r := c.Check(context.Background(), []Target{
		{Name: "alpha", URL: "https://user:PASSWORD@127.0.0.1:" + port + "/v3/SECRETKEY?apikey=SECRETQUERY#SECRETFRAG"},
		{Name: "beta", URL: "https://127.0.0.1:" + closedPort(t) + "/v3/SECRETKEY?apikey=SECRETQUERY"},
		{Name: "gamma", URL: "https://exa mple.test/SECRETKEY"},
		{Name: "delta", URL: "ftp://127.0.0.1/SECRETKEY"},
		{Name: "eps", URL: "http://%zz/SECRETKEY"},
		{Name: "zeta", URL: "SECRETKEY"},
	})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b) + fmt.Sprintf("%+v %v", r, r)
	for _, secret := range []string{"SECRET", "PASSWORD", "apikey", "user:"} {
		if strings.Contains(out, secret) {
			t.Fatalf("report leaks %q: %s", secret, out)
		}
	}
	if tlsOf(t, r, "alpha").IssuerOrg != "Test CA One" || tlsOf(t, r, "beta").Error == "" {
		t.Fatalf("secret URLs were not checked: %s", b)
	}
	for _, e := range r.Endpoints[2:] {
		if e.ResolveError == "" {
			t.Errorf("%s: bad URL has no error", e.Name)
		}
	}
}

func TestNewChecker_RejectsBadOptions(t *testing.T) {
	for _, opts := range []CheckerOptions{
		{ASN: "whois"},
		{ASN: ASNDB},
		{ASN: ASNDB, ASNDB: filepath.Join(t.TempDir(), "missing.mmdb")},
		{Resolver: "::1:53:"},
		{Resolver: "a b c"},
		{Resolver: "127.0.0.1:0"},
		{Resolver: "dns.test:99999"},
		{Resolver: "https://dns.test/x"},
		{Timeout: -time.Second},
	} {
		if _, err := NewChecker(opts); err == nil {
			t.Errorf("NewChecker(%+v) accepted", opts)
		}
	}
	for in, want := range map[string]string{"127.0.0.1:5353": "127.0.0.1:5353", "127.0.0.1": "127.0.0.1:53", "::1": "[::1]:53", "[::1]:53": "[::1]:53", "dns.test": "dns.test:53"} {
		if got, err := resolverAddr(in); err != nil || got != want {
			t.Errorf("resolverAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// ConfigProblems names probes.resolver and probes.asn_db as config errors
// (main reports them with the rest, before anything listens), and reads
// the database only when the probes run in asn mode db.
func TestConfigProblems_ResolverAndASNDatabase(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "asn.mmdb")
	if err := os.WriteFile(good, writeTestMMDB(t, []mmdbASN{{prefix: "192.0.2.0/24", asn: 64500, org: "Example"}}), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.mmdb")
	if err := os.WriteFile(bad, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []engine.ProbesConfig{
		{Enabled: true, Resolver: "127.0.0.1:5353", ASNDB: good},
		{Enabled: true, Resolver: "dns.test", ASN: ASNDB, ASNDB: good},
		{Enabled: true, ASN: ASNCymru, ASNDB: bad},
		{Enabled: false, ASNDB: filepath.Join(dir, "missing.mmdb")},
	} {
		if p := ConfigProblems(c); len(p) != 0 {
			t.Errorf("%+v: %v", c, p)
		}
	}
	got := ConfigProblems(engine.ProbesConfig{Enabled: true, Resolver: "a b c", ASNDB: bad})
	if len(got) != 2 || got[0].Key != "probes.resolver" || got[1].Key != "probes.asn_db" ||
		!strings.Contains(got[1].Why, "is not a MaxMind DB") {
		t.Errorf("got %v", got)
	}
	got = ConfigProblems(engine.ProbesConfig{Enabled: true, ASNDB: filepath.Join(dir, "missing.mmdb")})
	if len(got) != 1 || !strings.HasSuffix(got[0].Why, ": no such file or directory") || strings.Count(got[0].Why, "missing.mmdb") != 1 {
		t.Errorf("got %v", got)
	}
}
