package engine

import (
	"time"
	"unicode/utf8"
)

// lastErrorsKept is how many recent errors an endpoint remembers.
const lastErrorsKept = 5

// maxErrorText bounds one remembered error in characters, the ellipsis
// of a cut one included: causes are already redacted, but an upstream's
// words must never reach a screen unbounded.
const maxErrorText = 200

// EndpointError is one recent failure of an endpoint, redacted.
type EndpointError struct {
	Time time.Time
	Text string
}

// errorRing keeps the newest lastErrorsKept errors. The endpoint's mu
// guards it.
type errorRing struct {
	buf [lastErrorsKept]EndpointError
	n   int // errors ever added
}

func (r *errorRing) add(text string, at time.Time) {
	if utf8.RuneCountInString(text) > maxErrorText {
		cut, kept := 0, 0
		for kept < maxErrorText-1 {
			_, n := utf8.DecodeRuneInString(text[cut:])
			cut += n
			kept++
		}
		text = text[:cut] + "…"
	}
	r.buf[r.n%lastErrorsKept] = EndpointError{Time: at, Text: text}
	r.n++
}

// list returns the kept errors, newest first.
func (r *errorRing) list() []EndpointError {
	k := min(r.n, lastErrorsKept)
	if k == 0 {
		return nil
	}
	out := make([]EndpointError, 0, k)
	for i := 1; i <= k; i++ {
		out = append(out, r.buf[(r.n-i)%lastErrorsKept])
	}
	return out
}
