package engine

import (
	"errors"
	"io"
	"sync/atomic"
)

// Each request body is bounded by server.max_body_bytes, but
// server.max_inflight of them at once (4096 × 5 MiB, 20 GiB by default)
// is no bound at all: 1,000 clients sending 5 MiB bodies took rpcdash to
// 7.8 GB, and 1,000 sending 5 KB of gzip that decodes to 5 MiB to 8.1 GB.
// The bytes of request bodies held at once, as read or decoded, are
// bounded by server.max_held_body_bytes; past it a request gets HTTP 503,
// as past server.max_inflight.

// errBodyBudget: reading the body would pass server.max_held_body_bytes.
var errBodyBudget = errors.New("request bodies being served hold server.max_held_body_bytes")

// heldBodyLimit is the most bytes of request bodies held at once:
// server.max_held_body_bytes, and never less than one body of
// server.max_body_bytes.
func (s ServerConfig) heldBodyLimit() int64 {
	return max(s.MaxHeldBodyBytes, s.MaxBodyBytes)
}

// chargedReader counts what it reads against held, up to limit, until
// giveBack returns it once the request is served.
type chargedReader struct {
	r     io.Reader
	held  *atomic.Int64
	limit int64
	taken int64
}

func (c *chargedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.taken += int64(n)
		if c.held.Add(int64(n)) > c.limit {
			return n, errBodyBudget
		}
	}
	return n, err
}

func (c *chargedReader) giveBack() {
	c.held.Add(-c.taken)
	c.taken = 0
}
