package redact

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text that came from an upstream (a malformed status line, a broken
// header, an error string) or is built around it is cut to a length a
// screen and a log line can hold, and stripped of anything a terminal would
// act on, before it reaches a client error, a log, an event or the Snapshot.
const (
	MaxUpstream = 256  // one upstream-supplied cause
	MaxShown    = 1024 // an event message or last_error, whole
)

// Sanitize returns s with invalid UTF-8, control and other
// non-printable characters (escape sequences, bidi overrides) replaced by
// '?', cut to at most max bytes plus a note of how much was cut.
func Sanitize(s string, max int) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !shown(r, n) {
			clean = false
			break
		}
		i += n
	}
	if clean && len(s) <= max {
		return s
	}
	var b strings.Builder
	b.Grow(min(len(s), max) + 24)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if b.Len()+n > max {
			b.WriteString("… (" + strconv.Itoa(len(s)-i) + " bytes cut)")
			break
		}
		if !shown(r, n) {
			b.WriteByte('?')
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// shown says whether rune r, n bytes long as decoded, may reach a screen:
// valid UTF-8 and printable.
func shown(r rune, n int) bool {
	return !(r == utf8.RuneError && n <= 1) && unicode.IsPrint(r)
}

// Lines is s with every character Sanitize replaces replaced by '?' but
// newlines and tabs, and nothing cut: multi-line text (a status table)
// made fit for a terminal.
func Lines(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '\n' || r == '\t' || shown(r, n) {
			b.WriteString(s[i : i+n])
		} else {
			b.WriteByte('?')
		}
		i += n
	}
	return b.String()
}
