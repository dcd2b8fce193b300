package engine

import (
	"fmt"
	"net/url"
	"strings"
)

// BaseURL reads a command line's URL of a running rpcdash (status --admin,
// console --attach, bench --target/--admin, drill --admin/--target): a
// full URL (http://127.0.0.1:8546) or a bare host:port, which means http.
// It returns scheme://host[/path] without a trailing slash; flag names the
// flag in the error, and a credential in the value is never shown.
func BaseURL(flag, raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return "", fmt.Errorf("%s: %s is not a URL such as http://127.0.0.1:8546 or a host:port such as 127.0.0.1:8546", flag, ShowConfigValue(raw))
	}
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}
