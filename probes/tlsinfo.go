package probes

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"strings"
)

// tlsDialAttempts bounds how many resolved addresses are tried before the
// TLS check gives up.
const tlsDialAttempts = 3

// readTLS handshakes with the endpoint's resolved addresses (never resolving
// again, so the configured resolver is the only one used) and describes the
// certificate of the first that answers.
func (c *Checker) readTLS(ctx context.Context, ref endpointRef, addrs []netip.Addr) TLSInfo {
	if len(addrs) == 0 {
		return TLSInfo{Error: "not checked: no address to dial"}
	}
	var err error
	for i, a := range addrs {
		if i == tlsDialAttempts {
			break
		}
		var certs []*x509.Certificate
		certs, err = c.handshake(ctx, ref.host, net.JoinHostPort(a.String(), ref.port))
		if err == nil {
			return describeChain(certs, ref.host, c.roots())
		}
	}
	return TLSInfo{Error: "handshake failed: " + err.Error()}
}

func (c *Checker) handshake(ctx context.Context, serverName, addr string) ([]*x509.Certificate, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cfg := &tls.Config{}
	if c.tls != nil {
		cfg = c.tls.Clone()
	}
	cfg.ServerName = serverName
	// The chain is verified in describeChain so an untrusted certificate
	// still shows its issuer.
	cfg.InsecureSkipVerify = true
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: c.timeout}, Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, errors.New("server sent no certificate")
	}
	return certs, nil
}

func (c *Checker) roots() *x509.CertPool {
	if c.tls == nil {
		return nil
	}
	return c.tls.RootCAs
}

// describeChain reads the leaf's issuer and fingerprint, then verifies the
// chain against roots (nil = system roots) for host.
func describeChain(certs []*x509.Certificate, host string, roots *x509.CertPool) TLSInfo {
	leaf := certs[0]
	sum := sha256.Sum256(leaf.Raw)
	info := TLSInfo{
		IssuerOrg:       strings.Join(leaf.Issuer.Organization, ", "),
		IssuerCN:        leaf.Issuer.CommonName,
		LeafFingerprint: hex.EncodeToString(sum[:]),
	}
	intermediates := x509.NewCertPool()
	for _, cert := range certs[1:] {
		intermediates.AddCert(cert)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates, DNSName: host})
	if err != nil {
		info.Error = "certificate does not verify: " + err.Error()
	}
	return info
}
