package bench

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// checkTarget refuses a URL that is not http(s), and one off this machine
// unless allowRemote.
func checkTarget(raw string, allowRemote bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bench: bad target URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("bench: target scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("bench: target URL %q has no host", raw)
	}
	if allowRemote || isLoopbackHost(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("bench: target host %q is not a loopback address; bench only loads this machine (--allow-remote to override)", u.Hostname())
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
