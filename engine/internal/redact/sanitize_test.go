package redact

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSanitizeText_CutsAndStripsWhatATerminalWouldActOn(t *testing.T) {
	for in, want := range map[string]string{
		"HTTP 502":                 "HTTP 502",
		"é ü 日本":                   "é ü 日本",
		"red \x1b[31malert\x1b[0m": "red ?[31malert?[0m",
		"bell\x07 nul\x00 del\x7f": "bell? nul? del?",
		"bad \xff\xfe utf8":        "bad ?? utf8",
		"line\nbreak\r\ttab":       "line?break??tab",
		"bidi \u202eevil\u2066":    "bidi ?evil?",
		strings.Repeat("a", 20):    strings.Repeat("a", 20),
		strings.Repeat("b", 30):    strings.Repeat("b", 20) + "… (10 bytes cut)",
		strings.Repeat("日", 10):    strings.Repeat("日", 6) + "… (12 bytes cut)",
	} {
		if got := Sanitize(in, 20); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSanitizeText: whatever comes in, what goes out is valid UTF-8 with
// nothing non-printable, within the bound plus the note of what was cut.
func FuzzSanitizeText(f *testing.F) {
	for _, s := range []string{"", "ok", "\x1b[2J\x1b[H", "\xff\xfe", strings.Repeat("é", 100), "a\u202eb"} {
		f.Add(s, 16)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		out := Sanitize(s, max)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		body, _, _ := strings.Cut(out, "… (")
		if len(body) > max {
			t.Fatalf("%d bytes kept for a bound of %d", len(body), max)
		}
		for _, r := range out {
			if !unicode.IsPrint(r) {
				t.Fatalf("non-printable %U out of %q", r, s)
			}
		}
		if len(s) <= max && utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 && out != s {
			t.Fatalf("a clean short text was changed: %q -> %q", s, out)
		}
	})
}
