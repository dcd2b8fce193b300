package redact

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
)

// Scrubber removes every secret-bearing part of the configured URLs from
// free text: Go's errors quote the URL they dialled, and an upstream
// refusing a request may quote its key, its path, or the user name and
// password it was sent, each on its own.
type Scrubber struct {
	pairs []replacement
}

// replacement: old in text becomes repl; lower is old in ASCII lower
// case (Scrub's second pass), "" for a part matched only as spelt.
type replacement struct{ old, repl, lower string }

// Fragments shorter than these are not scrubbed on their own from free
// text, where they would mangle ordinary words (a user name "x" replaced
// in every word holding an x); the whole URL and its whole user info, path
// and query always are, whatever their length. A credential's value (the
// user name, the password, a query's value) goes from minScrubValue bytes;
// a path segment, which names a network or an API version as often as a
// key, from minScrubSegment.
const (
	minScrubSegment = 8
	minScrubValue   = 4
)

func NewScrubber(urls []string) *Scrubber {
	var wholes, parts []replacement
	seen := map[string]bool{}
	add := func(to *[]replacement, old, repl string) {
		if old != "" && old != "/" && !seen[old] {
			seen[old] = true
			*to = append(*to, replacement{old: old, repl: repl})
		}
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			add(&wholes, raw, "<endpoint url>")
			continue
		}
		add(&wholes, raw, URL(raw))
		for _, p := range secretParts(raw, u) {
			add(&parts, p.old, p.repl)
		}
	}
	// Whole URLs first, each shown as URL shows it; then the longest part
	// first, so that a short secret inside a longer one (a user name that
	// begins the password) does not leave the rest of the longer in view.
	longestFirst := func(a, b replacement) int { return cmp.Compare(len(b.old), len(a.old)) }
	slices.SortStableFunc(wholes, longestFirst)
	slices.SortStableFunc(parts, longestFirst)
	pairs := append(wholes, parts...)
	for i := range pairs {
		if len(pairs[i].old) >= minScrubSegment {
			pairs[i].lower = asciiLower(pairs[i].old)
		}
	}
	return &Scrubber{pairs: pairs}
}

// secretParts are the parts of raw (parsed as u) scrubbed on their own:
// its host name when Host hides labels of it, its user info, path and
// query whole, and within them the hidden labels, the user name, the
// password, each query value and each path segment long enough (see
// minScrubValue), each as raw spells it and decoded.
func secretParts(raw string, u *url.URL) []replacement {
	var out []replacement
	whole := func(old, repl string) { out = append(out, replacement{old: old, repl: repl}) }
	fragment := func(least int, decoded string, spelt ...string) {
		if len(decoded) < least {
			return
		}
		whole(decoded, redacted)
		for _, s := range spelt {
			whole(s, redacted)
		}
	}
	shownHost := Host(u.Host)
	if hidden, shown := splitHost(u.Hostname()); hidden != "" {
		// Go's errors name the host alone ("lookup abc.quiknode.pro: no
		// such host"); its hidden labels from minScrubSegment bytes, as a
		// path segment's, since they name a network as often as a key.
		whole(u.Hostname(), redacted+"."+shown)
		whole(strings.ToLower(u.Hostname()), redacted+"."+strings.ToLower(shown))
		fragment(minScrubSegment, hidden)
		for _, label := range strings.Split(hidden, ".") {
			fragment(minScrubSegment, label)
		}
	}
	if u.User != nil {
		info := rawUserinfo(raw)
		name, password, _ := strings.Cut(info, ":")
		if p, ok := u.User.Password(); ok {
			// name:password whole, whatever its length; without a password
			// the user info is the user name, a fragment as any other.
			whole(u.User.String(), redacted)
			whole(info, redacted)
			fragment(minScrubValue, p, password)
			// As Go spells the URL with its password hidden: the HTTP
			// client's errors (name:***@host) and URL.Redacted.
			whole(u.User.Username()+":***@"+u.Host, redacted+"@"+shownHost)
			whole(url.UserPassword(u.User.Username(), "xxxxx").String()+"@"+u.Host, redacted+"@"+shownHost)
		}
		fragment(minScrubValue, u.User.Username(), name)
		whole(u.User.String()+"@"+u.Host, redacted+"@"+shownHost) // a short user name before its host
		whole(info+"@"+u.Host, redacted+"@"+shownHost)
	}
	whole(u.RawQuery, redacted)
	whole(u.EscapedPath(), "/"+redacted)
	whole(u.Path, "/"+redacted)
	for _, el := range strings.Split(u.RawQuery, "&") {
		_, v, ok := strings.Cut(el, "=")
		if !ok {
			v = el // ?KEY: the element is the value
		}
		fragment(minScrubValue, unescaped(url.QueryUnescape, v), v)
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		fragment(minScrubSegment, unescaped(url.PathUnescape, seg), seg)
	}
	for _, seg := range strings.Split(u.Path, "/") { // an escaped "/" splits a segment
		fragment(minScrubSegment, seg)
	}
	return out
}

// rawUserinfo is the user info as raw spells it (url.Userinfo.String
// escapes it anew, which may spell it otherwise); raw has one.
func rawUserinfo(raw string) string {
	_, rest, _ := strings.Cut(raw, "//")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		return rest[:i]
	}
	return ""
}

func unescaped(unescape func(string) (string, error), s string) string {
	if d, err := unescape(s); err == nil {
		return d
	}
	return s
}

// Scrub replaces each secret part in text as the URL spells it, then
// each of minScrubSegment bytes or more in any ASCII case: an upstream that
// echoed a path key upper-cased (PATHKEYA1B2… for PATHKEYa1b2…) had it
// shown whole in the status, the events and the logs. A shorter part is
// matched only as spelt: a password "PASS" in any case is in "password".
func (s *Scrubber) Scrub(text string) string {
	for _, p := range s.pairs {
		if strings.Contains(text, p.old) {
			text = strings.ReplaceAll(text, p.old, p.repl)
		}
	}
	lower := asciiLower(text)
	for _, p := range s.pairs {
		if p.lower != "" && strings.Contains(lower, p.lower) {
			text = replaceFolded(text, lower, p.lower, p.repl)
			lower = asciiLower(text)
		}
	}
	return text
}

// replaceFolded replaces in text each place where lower (text in ASCII
// lower case, as long) holds old with repl.
func replaceFolded(text, lower, old, repl string) string {
	var b strings.Builder
	for {
		i := strings.Index(lower, old)
		if i < 0 {
			break
		}
		b.WriteString(text[:i])
		b.WriteString(repl)
		text, lower = text[i+len(old):], lower[i+len(old):]
	}
	b.WriteString(text)
	return b.String()
}
