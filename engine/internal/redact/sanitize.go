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
		if r == utf8.RuneError && n <= 1 || !unicode.IsPrint(r) {
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
		if r == utf8.RuneError && n <= 1 || !unicode.IsPrint(r) {
			b.WriteByte('?')
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
