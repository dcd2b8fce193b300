package redact

import (
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

const redacted = "REDACTED"

// URL returns raw as it may be shown: scheme, host and port only, the
// host's labels below its registrable domain hidden (Host).
// User info, the path and the query are each replaced by REDACTED whatever
// they look like, because a key's shape or length says nothing about
// whether it is one ("/MyShortKey" is as secret as an Infura key).
// Unparseable input is hidden whole.
func URL(raw string) string { return DisplayURL(raw, false) }

// DisplayURL is URL, except that a URL marked public
// ([[endpoints]] public_url = true) keeps its host, path and query whole:
// the operator has said they hold no credential. User info is a
// credential either way.
func DisplayURL(raw string, public bool) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "<unparseable url>"
	}
	var b strings.Builder
	b.WriteString(u.Scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString(redacted + "@")
	}
	if public {
		b.WriteString(u.Host)
	} else {
		b.WriteString(Host(u.Host))
	}
	switch {
	case public:
		b.WriteString(u.EscapedPath())
	case u.Path != "" && u.Path != "/" || u.RawPath != "":
		b.WriteString("/" + redacted)
	default:
		b.WriteString(u.Path)
	}
	switch {
	case u.RawQuery == "" && !u.ForceQuery:
	case public:
		b.WriteString("?" + u.RawQuery)
	default:
		b.WriteString("?" + redacted)
	}
	return b.String()
}

// Host is a URL's host[:port] as it may be shown: an IP address, or a name
// of one label (localhost), whole; another name as its registrable domain
// (the public suffix and the label before it: "quiknode.pro",
// "infura.io") with every label below it replaced by REDACTED. Providers
// name an endpoint by a subdomain, and some make it its only credential
// ("https://abc123secret.quiknode.pro/" with token auth off), and as with
// a path, a label's shape says nothing about whether it is one; the
// registrable domain still says which provider it is.
func Host(hostport string) string {
	host, port := hostport, ""
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	}
	hidden, shown := splitHost(host)
	if hidden == "" {
		return hostport
	}
	if port != "" {
		return net.JoinHostPort(redacted+"."+shown, port)
	}
	return redacted + "." + shown
}

// splitHost splits a host name into the labels Host hides and the
// registrable domain it shows ("abc.def", "quiknode.pro" for
// "abc.def.quiknode.pro"); hidden is "" when nothing is hidden. The
// domain is taken under the ICANN suffix ("io"), not a private one such
// as "ngrok.io" or "github.io", under which the label that names the
// user's own endpoint would count as the domain.
func splitHost(host string) (hidden, shown string) {
	name := strings.TrimSuffix(host, ".") // the root's dot ("localhost.")
	if net.ParseIP(host) != nil || !strings.Contains(name, ".") {
		return "", host
	}
	suffix := icannSuffix(asciiLower(name))
	rest := name[:len(name)-len(suffix)]
	if !strings.HasSuffix(rest, ".") || len(rest) == 1 {
		// The name is a suffix alone, or holds an empty label: show its
		// last label only.
		i := strings.LastIndex(name, ".")
		return name[:i], name[i+1:]
	}
	rest = rest[:len(rest)-1]
	i := strings.LastIndex(rest, ".")
	if i < 0 {
		return "", host // the registrable domain itself
	}
	return rest[:i], name[i+1:]
}

// icannSuffix is the public suffix of a lower-case name in the ICANN
// section of the list ("io" for "abc.ngrok.io"); its last label when the
// list knows none.
func icannSuffix(name string) string {
	s, icann := publicsuffix.PublicSuffix(name)
	for !icann {
		_, rest, ok := strings.Cut(s, ".")
		if !ok {
			return s
		}
		if s, icann = publicsuffix.PublicSuffix(rest); s != rest {
			s, icann = rest, false
		}
	}
	return s
}

// asciiLower lower-cases s's ASCII letters and keeps every other byte, so
// that positions in it are positions in s: strings.ToLower writes an
// invalid byte as U+FFFD, three bytes, and the suffix it yielded was cut
// from s at the wrong place (a panic on "A://.\xb5").
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
