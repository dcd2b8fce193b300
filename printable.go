package main

import (
	"io"

	"github.com/rpcdash/rpcdash/engine"
)

// printableWriter passes text on with every character a terminal would act
// on (escape sequences, other control characters, invalid UTF-8) replaced
// by '?', newlines and tabs kept (engine.ShownLines). What an admin API
// answers is printed, never obeyed: --admin may name a server that is not
// rpcdash, or one that does not clean its texts as this version does.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, engine.ShownLines(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
