package jsonrpc

import "fmt"

// BatchCounter counts a batch's elements as its bytes arrive, so that a
// batch over server.max_batch is refused after the first bytes past the
// limit, not after the whole body (up to server.max_body_bytes) has been
// read and held. It counts only a body whose first byte that is not space
// is '['; anything else passes uncounted to ParseBodyLimit.
type BatchCounter struct {
	max      int
	n        int
	depth    int
	started  bool // a byte that is not space has been seen
	done     bool // not a batch, or its array has closed
	inString bool
	escaped  bool
	want     bool // at depth 1, the next byte that is not space opens an element
}

// NewBatchCounter counts against maxBatch; 0 or less counts nothing.
func NewBatchCounter(maxBatch int) BatchCounter {
	return BatchCounter{max: maxBatch, done: maxBatch <= 0}
}

// Write scans the next bytes of the body and reports whether the batch has
// passed the limit.
func (c *BatchCounter) Write(p []byte) (over bool) {
	for _, b := range p {
		if c.done {
			return false
		}
		if c.inString {
			switch {
			case c.escaped:
				c.escaped = false
			case b == '\\':
				c.escaped = true
			case b == '"':
				c.inString = false
			}
			continue
		}
		if isSpace(b) {
			continue
		}
		if !c.started {
			c.started = true
			if b != '[' {
				c.done = true
				return false
			}
			c.depth, c.want = 1, true
			continue
		}
		if c.depth == 1 && c.want && b != ']' {
			c.want = false
			if c.n++; c.n > c.max {
				return true
			}
		}
		switch b {
		case '"':
			c.inString = true
		case '[', '{':
			c.depth++
		case ']', '}':
			if c.depth--; c.depth == 0 {
				c.done = true
			}
		case ',':
			if c.depth == 1 {
				c.want = true
			}
		}
	}
	return false
}

// BatchTooLarge is the answer to a batch over server.max_batch.
func BatchTooLarge(maxBatch int) *Error {
	return &Error{Code: CodeLimitExceeded, Message: fmt.Sprintf("batch exceeds server.max_batch (%d requests)", maxBatch)}
}
