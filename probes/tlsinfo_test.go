package probes

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newSerial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newTestCA(t *testing.T, org string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(t),
		Subject:               pkix.Name{Organization: []string{org}, CommonName: org + " Root"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

// leaf issues a server certificate for 127.0.0.1 and the given names.
func (ca *testCA) leaf(t *testing.T, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(t),
		Subject:      pkix.Name{CommonName: "rpc"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     names,
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func fingerprint(cert tls.Certificate) string {
	sum := sha256.Sum256(cert.Certificate[0])
	return hex.EncodeToString(sum[:])
}

func rootsOf(cas ...*testCA) *tls.Config {
	pool := x509.NewCertPool()
	for _, ca := range cas {
		pool.AddCert(ca.cert)
	}
	return &tls.Config{RootCAs: pool}
}

// startTLSServer serves cert on a loopback port and returns the port.
func startTLSServer(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	// Checks close right after the handshake, which the server would log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

// closedPort returns a loopback port nothing listens on, below the
// ephemeral range so that no parallel test's listener is given it.
func closedPort(t *testing.T) string {
	t.Helper()
	_, port, _ := net.SplitHostPort(testutil.FreeAddrs(t, 1)[0])
	return port
}

func newTestChecker(t *testing.T, opts CheckerOptions) *Checker {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	c, err := NewChecker(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func tlsOf(t *testing.T, r Report, name string) *TLSInfo {
	t.Helper()
	for _, e := range r.Endpoints {
		if e.Name == name {
			if e.TLS == nil {
				t.Fatalf("%s: no TLS info", name)
			}
			return e.TLS
		}
	}
	t.Fatalf("%s not in report", name)
	return nil
}

func TestTLS_DifferentCAsShowDifferentIssuers(t *testing.T) {
	one, two := newTestCA(t, "Test CA One"), newTestCA(t, "Test CA Two")
	leafOne, leafTwo := one.leaf(t), two.leaf(t)
	p1, p2 := startTLSServer(t, leafOne), startTLSServer(t, leafTwo)
	c := newTestChecker(t, CheckerOptions{ASN: ASNOff, TLSConfig: rootsOf(one, two)})

	r := c.Check(context.Background(), []Target{
		{Name: "alpha", URL: "https://127.0.0.1:" + p1},
		{Name: "beta", URL: "wss://127.0.0.1:" + p2 + "/ws"},
	})
	a, b := tlsOf(t, r, "alpha"), tlsOf(t, r, "beta")
	if *a != (TLSInfo{IssuerOrg: "Test CA One", IssuerCN: "Test CA One Root", LeafFingerprint: fingerprint(leafOne)}) {
		t.Errorf("alpha TLS = %+v", *a)
	}
	if *b != (TLSInfo{IssuerOrg: "Test CA Two", IssuerCN: "Test CA Two Root", LeafFingerprint: fingerprint(leafTwo)}) {
		t.Errorf("beta TLS = %+v", *b)
	}
}

func TestTLS_OneCATwoLeavesSameIssuerDifferentFingerprints(t *testing.T) {
	one := newTestCA(t, "Test CA One")
	p1, p2 := startTLSServer(t, one.leaf(t)), startTLSServer(t, one.leaf(t))
	c := newTestChecker(t, CheckerOptions{ASN: ASNOff, TLSConfig: rootsOf(one)})

	r := c.Check(context.Background(), []Target{
		{Name: "alpha", URL: "https://127.0.0.1:" + p1},
		{Name: "beta", URL: "https://127.0.0.1:" + p2},
	})
	a, b := tlsOf(t, r, "alpha"), tlsOf(t, r, "beta")
	if a.IssuerOrg != "Test CA One" || b.IssuerOrg != "Test CA One" || a.Error != "" || b.Error != "" {
		t.Errorf("issuers %+v %+v", *a, *b)
	}
	if a.LeafFingerprint == b.LeafFingerprint || len(a.LeafFingerprint) != 64 {
		t.Errorf("fingerprints %q %q, want two different sha256", a.LeafFingerprint, b.LeafFingerprint)
	}
	if got := reasons(r.Warnings); slices.Contains(got, "tls-leaf:alpha and beta") {
		t.Errorf("different leaves warned as shared: %q", got)
	}
}

func TestTLS_SameLeafOnTwoServersIsOneDomain(t *testing.T) {
	one := newTestCA(t, "Test CA One")
	leaf := one.leaf(t)
	p1, p2 := startTLSServer(t, leaf), startTLSServer(t, leaf)
	c := newTestChecker(t, CheckerOptions{ASN: ASNOff, TLSConfig: rootsOf(one)})
	r := c.Check(context.Background(), []Target{
		{Name: "alpha", URL: "https://127.0.0.1:" + p1},
		{Name: "beta", URL: "https://127.0.0.1:" + p2},
	})
	want := []string{"ip:alpha and beta", "tls-leaf:alpha and beta", "pool:alpha and beta"}
	if got := reasons(r.Warnings); !slices.Equal(got, want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
}

func TestTLS_UntrustedChainStillReportsIssuer(t *testing.T) {
	one, two := newTestCA(t, "Test CA One"), newTestCA(t, "Test CA Two")
	leaf := one.leaf(t)
	port := startTLSServer(t, leaf)
	c := newTestChecker(t, CheckerOptions{ASN: ASNOff, TLSConfig: rootsOf(two)})
	r := c.Check(context.Background(), []Target{{Name: "alpha", URL: "https://127.0.0.1:" + port}})
	got := tlsOf(t, r, "alpha")
	if got.IssuerOrg != "Test CA One" || got.LeafFingerprint != fingerprint(leaf) {
		t.Errorf("issuer not read: %+v", *got)
	}
	if !strings.HasPrefix(got.Error, "certificate does not verify") {
		t.Errorf("Error = %q, want a verification failure", got.Error)
	}
}

func TestTLS_DialsResolvedAddressWithServerName(t *testing.T) {
	f := startFakeDNS(t)
	f.a("one.test", "127.0.0.1")
	one := newTestCA(t, "Test CA One")
	port := startTLSServer(t, one.leaf(t, "one.test"))
	c := newTestChecker(t, CheckerOptions{Resolver: f.addr, ASN: ASNOff, TLSConfig: rootsOf(one)})

	r := c.Check(context.Background(), []Target{{Name: "alpha", URL: "https://one.test:" + port}})
	if got := tlsOf(t, r, "alpha"); got.Error != "" || got.IssuerOrg != "Test CA One" {
		t.Fatalf("TLS = %+v", *got)
	}
	if e := r.Endpoints[0]; e.Host != "one.test" || len(e.IPs) != 1 || e.IPs[0].IP != "127.0.0.1" {
		t.Fatalf("endpoint = %+v", e)
	}
	if f.count("one.test", dns.TypeA) != 1 || f.count("one.test", dns.TypeAAAA) != 1 {
		t.Fatalf("queries %v", f.log())
	}
}

func TestTLS_RefusedAndPlainHTTP(t *testing.T) {
	c := newTestChecker(t, CheckerOptions{ASN: ASNOff})
	r := c.Check(context.Background(), []Target{
		{Name: "alpha", URL: "https://127.0.0.1:" + closedPort(t)},
		{Name: "beta", URL: "http://127.0.0.1:" + closedPort(t)},
		{Name: "gamma", URL: "https://127.0.0.1:" + closedPort(t), Proxied: true},
	})
	if got := tlsOf(t, r, "alpha"); !strings.HasPrefix(got.Error, "handshake failed") || got.LeafFingerprint != "" || strings.Contains(got.Error, "proxy") {
		t.Errorf("refused TLS = %+v", *got)
	}
	// Reached through a proxy, the endpoint may be out of the check's
	// direct reach: the failure says so.
	if got := tlsOf(t, r, "gamma"); !strings.HasPrefix(got.Error, "handshake failed") || !strings.HasSuffix(got.Error, "(the endpoint is reached through a proxy; this check dials it directly)") {
		t.Errorf("proxied TLS = %+v", *got)
	}
	if r.Endpoints[1].TLS != nil {
		t.Errorf("http endpoint has TLS info %+v", *r.Endpoints[1].TLS)
	}
}

// A certificate that verifies against the roots but names another host is
// reported as not verifying: a client of the endpoint would refuse it.
func TestTLS_ACertificateForAnotherHostDoesNotVerify(t *testing.T) {
	f := startFakeDNS(t)
	f.a("two.test", "127.0.0.1")
	one := newTestCA(t, "Test CA One")
	port := startTLSServer(t, one.leaf(t, "one.test"))
	c := newTestChecker(t, CheckerOptions{Resolver: f.addr, ASN: ASNOff, TLSConfig: rootsOf(one)})
	r := c.Check(context.Background(), []Target{{Name: "alpha", URL: "https://two.test:" + port}})
	got := tlsOf(t, r, "alpha")
	if got.IssuerOrg != "Test CA One" || !strings.HasPrefix(got.Error, "certificate does not verify") || !strings.Contains(got.Error, "two.test") {
		t.Fatalf("TLS = %+v, want the issuer and a verification failure naming two.test", *got)
	}
}

// A host with several addresses, the first of which refuses: the
// certificate is read from the next one, not reported as a failed
// handshake.
func TestTLS_TheNextAddressIsDialledWhenTheFirstRefuses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	one := newTestCA(t, "Test CA One")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Listener.Close()
	srv.Listener = l
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{one.leaf(t, "two.test")}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		c.Close()
		t.Skipf("127.0.0.1:%s is taken: the test needs it refused", port)
	}
	f := startFakeDNS(t)
	f.a("two.test", "127.0.0.1", "127.0.0.2") // tried in this order
	c := newTestChecker(t, CheckerOptions{Resolver: f.addr, ASN: ASNOff, TLSConfig: rootsOf(one)})
	r := c.Check(context.Background(), []Target{{Name: "alpha", URL: "https://two.test:" + port}})
	if got := tlsOf(t, r, "alpha"); got.Error != "" || got.IssuerOrg != "Test CA One" {
		t.Fatalf("TLS = %+v, want the certificate of 127.0.0.2", *got)
	}
}

// A proxied endpoint whose direct check succeeds has no TLS error: the
// note about the proxy explains a failure, it is not one.
func TestTLS_AProxiedEndpointReadDirectlyHasNoError(t *testing.T) {
	one := newTestCA(t, "Test CA One")
	port := startTLSServer(t, one.leaf(t))
	c := newTestChecker(t, CheckerOptions{ASN: ASNOff, TLSConfig: rootsOf(one)})
	r := c.Check(context.Background(), []Target{{Name: "alpha", URL: "https://127.0.0.1:" + port, Proxied: true}})
	if got := tlsOf(t, r, "alpha"); got.Error != "" || got.IssuerOrg != "Test CA One" {
		t.Fatalf("TLS = %+v, want the issuer and no error", *got)
	}
}
