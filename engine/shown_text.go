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
