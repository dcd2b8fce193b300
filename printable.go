package main

import (
	"io"
	"unicode"
	"unicode/utf8"
)

// printableWriter passes text on with every character a terminal would act
// on (escape sequences, other control characters, invalid UTF-8) replaced
// by '?', newlines and tabs kept. What an admin API answers is printed,
// never obeyed: --admin may name a server that is not rpcdash, or one
// that does not clean its texts as this version does.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == '\n' || r == '\t':
			out = append(out, b[i])
		case r == utf8.RuneError && n <= 1 || !unicode.IsPrint(r):
			out = append(out, '?')
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
