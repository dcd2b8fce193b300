package engine

import (
	"net/url"
	"strings"
)

const redacted = "REDACTED"

// RedactURL returns raw with credentials removed: userinfo, every query
// value, and any path segment that looks like a key (long, or mixing letters
// and digits the way API keys do). Unparseable input is hidden whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "<unparseable url>"
	}
	if u.User != nil {
		u.User = url.User(redacted)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{redacted}
		}
		u.RawQuery = q.Encode()
	}
	if u.Path != "" && u.Path != "/" {
		segs := strings.Split(u.Path, "/")
		for i, s := range segs {
			if looksLikeSecret(s) {
				segs[i] = redacted
			}
		}
		u.Path = strings.Join(segs, "/")
		u.RawPath = ""
	}
	u.Fragment = ""
	return u.String()
}

// looksLikeSecret flags path segments such as Infura/Alchemy keys
// ("/v3/9aa3d95b3bc440fa88ea12eaa4456161") while keeping words like "rpc",
// "v2" or "mainnet" readable.
func looksLikeSecret(s string) bool {
	if len(s) >= 16 {
		return true
	}
	if len(s) < 8 {
		return false
	}
	var letters, digits int
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters++
		}
	}
	return letters > 0 && digits > 0
}

// secretScrubber removes every secret-bearing part of the configured URLs
// from free text (upstream error strings quote the URL they dialled).
type secretScrubber struct {
	pairs []string // old, new, old, new ...
}

func newSecretScrubber(urls []string) *secretScrubber {
	s := &secretScrubber{}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			s.pairs = append(s.pairs, raw, "<endpoint url>")
			continue
		}
		s.pairs = append(s.pairs, raw, RedactURL(raw))
		if u.User != nil {
			s.pairs = append(s.pairs, u.User.String(), redacted)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				if len(v) >= 4 {
					s.pairs = append(s.pairs, v, redacted)
				}
			}
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if looksLikeSecret(seg) {
				s.pairs = append(s.pairs, seg, redacted)
			}
		}
	}
	return s
}

func (s *secretScrubber) Scrub(text string) string {
	for i := 0; i < len(s.pairs); i += 2 {
		if strings.Contains(text, s.pairs[i]) {
			text = strings.ReplaceAll(text, s.pairs[i], s.pairs[i+1])
		}
	}
	return text
}

// ScrubConfigError removes endpoint URL secrets from a config error message
// (decoders quote the offending value).
func ScrubConfigError(msg string, urls []string) string {
	return newSecretScrubber(urls).Scrub(msg)
}
