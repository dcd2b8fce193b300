package engine

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// README: errors[].text is at most 200 characters, a cut one's ellipsis
// included.
func TestLastErrors_TextAtMost200CharactersWithTheEllipsis(t *testing.T) {
	for _, c := range []struct {
		name, text string
		cut        bool
	}{
		{"ascii, exactly 200", strings.Repeat("a", 200), false},
		{"ascii, 201", strings.Repeat("a", 201), true},
		{"ascii, 5000", strings.Repeat("a", 5000), true},
		{"multibyte, exactly 200", strings.Repeat("é", 200), false},
		{"multibyte, 300", strings.Repeat("界", 300), true},
	} {
		var r errorRing
		r.add(c.text, time.Unix(0, 0))
		got := r.list()[0].Text
		n := utf8.RuneCountInString(got)
		if n > maxErrorText || !utf8.ValidString(got) {
			t.Errorf("%s: %d characters (valid UTF-8 %v)", c.name, n, utf8.ValidString(got))
		}
		if cut := strings.HasSuffix(got, "…"); cut != c.cut || (c.cut && n != maxErrorText) || (!c.cut && got != c.text) {
			t.Errorf("%s: %d characters, cut %v; want cut %v to exactly %d", c.name, n, cut, c.cut, maxErrorText)
		}
	}
}
