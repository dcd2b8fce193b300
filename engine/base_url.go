package engine

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// BaseURL reads a command line's URL of a running rpcdash (status --admin,
// console --attach, bench --target/--admin, drill --admin/--target): a
// full URL (http://127.0.0.1:8546) or a bare host:port, which means http;
// a bare host without its port (127.0.0.1) is refused, not taken for
// port 80, and so is a port outside 1–65535. It returns
// scheme://host[/path] without a trailing slash; flag names the flag in
// the error, and a credential in the value is never shown.
func BaseURL(flag, raw string) (string, error) {
	return baseURL(flag, raw, "an admin API's token has its own flag (--token, --admin-token)")
}

// baseURL is BaseURL, whose refusal of user info ends with hint: what to
// do instead, which differs for an admin URL and a JSON-RPC target.
func baseURL(flag, raw, hint string) (string, error) {
	s := strings.TrimSpace(raw)
	bare := !strings.Contains(s, "://")
	if bare {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err == nil && u.User != nil && u.Hostname() != "" {
		// It is a URL: saying it is not one sent users looking elsewhere.
		return "", &ShownError{fmt.Sprintf("%s: %s carries user info (user:password@), which rpcdash never sends: %s", flag, showFlagURL(raw), hint)}
	}
	if err != nil || u.Host == "" || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil ||
		!portOK(u, bare) {
		return "", &ShownError{fmt.Sprintf("%s: %s is not a URL such as http://127.0.0.1:8546 or a host:port such as 127.0.0.1:8546", flag, showFlagURL(raw))}
	}
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// ShownError is an error whose text already shows its URL as errors show
// them, secrets REDACTED, around words of rpcdash's own: a command prints
// it as it is. Scrubbing it again as a whole took those words for
// secrets: --admin http://user:pw@… printed "carries REDACTED info
// (REDACTED:password@)".
type ShownError struct{ Text string }

func (e *ShownError) Error() string { return e.Text }

// TargetURL is BaseURL for a URL that JSON-RPC calls are posted to
// (bench --target): its query is kept. BaseURL's form drops it, and a
// provider's key given as ?apikey=… was not sent: every call refused.
func TargetURL(flag, raw string) (string, error) {
	base, err := baseURL(flag, raw, "an endpoint that takes a password is reached through an rpcdash whose [[endpoints]] url carries it, with --target naming that rpcdash")
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	if u, err := url.Parse(s); err == nil && u.RawQuery != "" {
		base += "?" + u.RawQuery
	}
	return base, nil
}

// showFlagURL is a URL flag's value as its error shows it: as an endpoint
// URL is shown (scheme, host and port; user info, path and query
// REDACTED), a bare host:port's path too (mainnet.infura.io/v3/KEY was
// shown whole, having no "://" to be known for a URL by).
func showFlagURL(raw string) string {
	s := strings.TrimSpace(raw)
	if strings.Contains(s, "://") {
		return ShowConfigValue(s)
	}
	shown, ok := strings.CutPrefix(redact.URL("http://"+s), "http://")
	if !ok {
		return strconv.Quote(redact.URL(s)) // unparseable either way
	}
	return strconv.Quote(redact.Sanitize(shown, 80))
}

// portOK: a bare host:port needs its port; a URL's port, when it has the
// colon of one, is a number in 1–65535.
func portOK(u *url.URL, bare bool) bool {
	if u.Port() == "" {
		return !bare && !strings.HasSuffix(u.Host, ":")
	}
	n, err := strconv.Atoi(u.Port())
	return err == nil && n >= 1 && n <= 65535
}

// ShownURL is raw as rpcdash shows a URL it was given (a flag's target, an
// admin URL): scheme, host and port, its user info, path and query each
// REDACTED, since a provider's key is often in its path.
func ShownURL(raw string) string { return redact.URL(raw) }

// ShownHost is a host (or host:port) as ShownURL shows it: a name's labels
// below its registrable domain REDACTED, since a provider may make such a
// label the only credential.
func ShownHost(hostport string) string { return redact.Host(hostport) }
