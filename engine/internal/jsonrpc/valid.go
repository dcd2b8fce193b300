package jsonrpc

import (
	"bytes"
	"encoding/json"

	segjson "github.com/segmentio/encoding/json"
)

// Valid reports whether b is one valid JSON value, as encoding/json's
// Valid does (FuzzValidMatchesEncodingJSON holds the two to the same
// answers). Every answer relayed is checked whole, and encoding/json's
// check (about 450 MB/s here) was over half of rpcdash's CPU on a 50 MB
// eth_getLogs answer, 7× a direct client's time (proxy overhead audit,
// stop 55); segmentio's is about 3 GB/s, and with the depth scan first
// 1.6 GB/s.
//
// segmentio's check recurses once per level of nesting, with no bound: a
// body of 100,000 nested arrays grew rpcdash by 61 MB of stack, and a few
// million would end the process. A value nested deeper than maxFastDepth
// is checked by encoding/json, whose memory is bounded (it refuses past
// 10,000 levels); JSON-RPC answers nest a few levels, a call trace a few
// hundred at most.
func Valid(b []byte) bool {
	if nestedBeyond(b, maxFastDepth) {
		return json.Valid(b)
	}
	return segjson.Valid(b)
}

const maxFastDepth = 256

// MaxDepth is the deepest nesting Valid takes: encoding/json's bound.
const MaxDepth = 10000

// nestedBeyond says whether b opens more than limit arrays or objects at
// once, its strings skipped. It judges nothing else: b may be invalid.
func nestedBeyond(b []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for {
				j := bytes.IndexByte(b[i+1:], '"')
				if j < 0 {
					return false
				}
				i += j + 1
				// Escaped when an odd run of backslashes is before it.
				n := 0
				for k := i - 1; b[k] == '\\'; k-- {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		case '[', '{':
			if depth++; depth > limit {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}
