package redact

import (
	"net/url"
	"strings"
)

const redacted = "REDACTED"

// URL returns raw as it may be shown: scheme, host and port only.
// User info, the path and the query are each replaced by REDACTED whatever
// they look like, because a key's shape or length says nothing about
// whether it is one ("/MyShortKey" is as secret as an Infura key).
// Unparseable input is hidden whole.
func URL(raw string) string { return DisplayURL(raw, false) }

// DisplayURL is URL, except that a URL marked public
// ([[endpoints]] public_url = true) keeps its path and query: the operator
// has said they hold no credential. User info is a credential either way.
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
	b.WriteString(u.Host)
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
