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

// Scrubber removes every secret-bearing part of the configured URLs
// from free text (Go's errors quote the URL they dialled).
type Scrubber struct {
	pairs []string // old, new, old, new ...
}

// Fragments shorter than these are not scrubbed on their own from free
// text, where they would mangle ordinary words; the whole URL, its whole
// path and its whole query always are, whatever their length.
const (
	minScrubSegment = 8
	minScrubValue   = 4
)

func NewScrubber(urls []string) *Scrubber {
	s := &Scrubber{}
	add := func(old, repl string) {
		if old != "" && old != "/" {
			s.pairs = append(s.pairs, old, repl)
		}
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			add(raw, "<endpoint url>")
			continue
		}
		add(raw, URL(raw))
		if u.User != nil {
			add(u.User.String(), redacted)
		}
		add(u.RawQuery, redacted)
		add(u.EscapedPath(), "/"+redacted)
		add(u.Path, "/"+redacted)
		for _, vs := range u.Query() {
			for _, v := range vs {
				if len(v) >= minScrubValue {
					add(v, redacted)
				}
			}
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if len(seg) >= minScrubSegment {
				add(seg, redacted)
			}
		}
	}
	return s
}

func (s *Scrubber) Scrub(text string) string {
	for i := 0; i < len(s.pairs); i += 2 {
		if strings.Contains(text, s.pairs[i]) {
			text = strings.ReplaceAll(text, s.pairs[i], s.pairs[i+1])
		}
	}
	return text
}
