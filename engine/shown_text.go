package engine

import "github.com/rpcdash/rpcdash/engine/internal/redact"

// ShownText is text that came from outside this process (another
// instance's admin API, which may not be rpcdash at all) made fit for a
// terminal: control characters, escape sequences and invalid UTF-8
// replaced by '?', cut to 1024 bytes, as upstream text is.
func ShownText(s string) string { return redact.Sanitize(s, redact.MaxShown) }

// ShownLines is ShownText for multi-line text: newlines and tabs kept,
// nothing cut.
func ShownLines(s string) string { return redact.Lines(s) }

// TextScrubber makes free text another program had a hand in fit to
// show: the secrets of the URLs it was built with REDACTED, as in
// rpcdash's own logs and errors, then ShownText. A tool's target URL (a
// provider's, key in its path or query) comes back quoted in the
// target's error answers and in Go's own errors.
type TextScrubber struct{ s *redact.Scrubber }

// NewTextScrubber builds one for the secrets of urls.
func NewTextScrubber(urls []string) TextScrubber { return TextScrubber{redact.NewScrubber(urls)} }

// Shown is s scrubbed of the URLs' secrets and made fit for a terminal.
func (t TextScrubber) Shown(s string) string { return ShownText(t.s.Scrub(s)) }

// Scrub is s with the URLs' secrets REDACTED and nothing else changed:
// for a message of rpcdash's own, whole, that may quote them (Go's
// "lookup HOST: no such host").
func (t TextScrubber) Scrub(s string) string { return t.s.Scrub(s) }
