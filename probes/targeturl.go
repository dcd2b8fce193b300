package probes

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/rpcdash/rpcdash/engine"
)

type endpointRef struct {
	host string
	port string
	tls  bool
}

// parseEndpointURL never wraps url.Parse's error: it quotes the whole URL.
func parseEndpointURL(raw string) (endpointRef, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return endpointRef{}, errors.New("URL does not parse")
	}
	var ref endpointRef
	switch strings.ToLower(u.Scheme) {
	case "https", "wss":
		ref.tls, ref.port = true, "443"
	case "http", "ws":
		ref.port = "80"
	default:
		return endpointRef{}, errors.New("URL scheme is not http, https, ws or wss")
	}
	ref.host = u.Hostname()
	if ref.host == "" {
		return endpointRef{}, errors.New("URL has no host")
	}
	if p := u.Port(); p != "" {
		ref.port = p
	}
	return ref, nil
}

// resolverAddr reads probes.resolver: the host:port of a DNS server, or a
// bare host (port 53). The host must be an IP address or a DNS name and
// the port a number from 1 to 65535: "a b c" used to pass as "a b c:53"
// and fail only at the first lookup.
func resolverAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), "53"
		if _, err := netip.ParseAddr(host); err != nil && strings.Contains(host, ":") {
			host = ""
		}
	}
	n, err := strconv.Atoi(port)
	if !dnsHost(host) || err != nil || n < 1 || n > 65535 || port[0] == '+' {
		return "", fmt.Errorf("%s is not the host:port of a DNS server (such as \"1.1.1.1:53\")", engine.ShowConfigValue(s))
	}
	return net.JoinHostPort(host, port), nil
}

// dnsHost says whether host is an IP address or a DNS name.
func dnsHost(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "" || len(host) > 253 || strings.HasPrefix(host, ".") || strings.Contains(host, "..") {
		return false
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// redactor scrubs the secret parts of one URL from error text, in case a
// lower layer ever quotes them.
type redactor struct{ secrets []string }

func newRedactor(raw string) redactor {
	r := redactor{secrets: []string{raw}}
	if u, err := url.Parse(raw); err == nil {
		if u.User != nil {
			r.secrets = append(r.secrets, u.User.String())
		}
		if len(u.Path) > 1 {
			r.secrets = append(r.secrets, u.Path, u.EscapedPath())
		}
		if u.RawQuery != "" {
			r.secrets = append(r.secrets, u.RawQuery)
		}
		if u.Fragment != "" {
			r.secrets = append(r.secrets, u.Fragment)
		}
	}
	return r
}

func (r redactor) clean(s string) string {
	for _, sec := range r.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}
