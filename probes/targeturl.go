package probes

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
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

func resolverAddr(s string) (string, error) {
	if _, _, err := net.SplitHostPort(s); err == nil {
		return s, nil
	}
	host := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if _, err := netip.ParseAddr(host); err == nil || (host != "" && !strings.Contains(host, ":")) {
		return net.JoinHostPort(host, "53"), nil
	}
	return "", fmt.Errorf("probes: resolver %q is not host:port", s)
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
