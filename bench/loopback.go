package bench

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// checkLoopback refuses any target that is not http(s) on a loopback
// address. Host names other than "localhost" are refused rather than
// resolved: bench never sends load anywhere but this machine.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bench: bad target URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("bench: target scheme %q is not http or https", u.Scheme)
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("bench: target host %q is not a loopback address; bench only loads this machine", host)
}
