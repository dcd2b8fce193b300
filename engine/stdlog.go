package engine

import (
	"io"
	"strings"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// StdLogWriter is where the standard library's own log lines belong while
// the engine runs (log.SetOutput). Go's HTTP client logs through the global
// logger, which writes to stderr: onto the console's screen, past the
// engine's logger. What it logs can be an upstream's bytes
// ("Unsolicited response received on idle HTTP channel starting with …":
// up to 4 KiB an upstream sent past its answer's Content-Length). Each line
// becomes a warning of the engine's log, scrubbed of endpoint URLs and
// sanitised and cut like any upstream text.
func (e *Engine) StdLogWriter() io.Writer { return stdLog{e} }

type stdLog struct{ e *Engine }

func (w stdLog) Write(p []byte) (int, error) {
	text := strings.TrimSuffix(string(p), "\n")
	w.e.log.Warn("go runtime", "text", redact.Sanitize(w.e.scrub.Scrub(text), redact.MaxUpstream))
	return len(p), nil
}
