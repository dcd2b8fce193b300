package sim

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
)

// requestLogSize is how many params Requests keeps per method.
const requestLogSize = 1000

type recordState struct {
	mu          sync.Mutex
	submissions []string
	byMethod    map[string]*paramRing
}

func newRecordState() recordState {
	return recordState{byMethod: map[string]*paramRing{}}
}

// paramRing keeps the last requestLogSize params of one method.
type paramRing struct {
	buf  []json.RawMessage
	next int
}

func (r *paramRing) add(p json.RawMessage) {
	if len(r.buf) < requestLogSize {
		r.buf = append(r.buf, p)
		return
	}
	r.buf[r.next] = p
	r.next = (r.next + 1) % requestLogSize
}

func (r *paramRing) ordered() []json.RawMessage {
	out := make([]json.RawMessage, 0, len(r.buf))
	for i := range r.buf {
		out = append(out, bytes.Clone(r.buf[(r.next+i)%len(r.buf)]))
	}
	return out
}

// record logs params and write submissions of the arriving requests. It
// runs before counting, so a test woken by a counter sees them already.
func (u *Upstream) record(reqs []request) {
	s := &u.records
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range reqs {
		if r.Method == "" {
			continue
		}
		ring := s.byMethod[r.Method]
		if ring == nil {
			ring = &paramRing{}
			s.byMethod[r.Method] = ring
		}
		ring.add(r.Params)
		if isWrite(u.cfg.Chain, r.Method) {
			s.submissions = append(s.submissions, submission(r.Params))
		}
	}
}

// submission is params[0] of a write: a JSON string decoded, anything else
// (an eth_sendTransaction object, say) as its raw JSON text.
func submission(params json.RawMessage) string {
	args, err := positional(params)
	if err != nil || len(args) == 0 {
		return string(params)
	}
	var s string
	if json.Unmarshal(args[0], &s) == nil {
		return s
	}
	return string(args[0])
}

// Submissions returns params[0] of every write received, in arrival order,
// whether or not it was answered. JSON strings are returned decoded.
func (u *Upstream) Submissions() []string {
	s := &u.records
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.submissions)
}

// Requests returns the params of the last 1000 requests of method, oldest
// first; a request without params has a nil entry.
func (u *Upstream) Requests(method string) []json.RawMessage {
	s := &u.records
	s.mu.Lock()
	defer s.mu.Unlock()
	ring := s.byMethod[method]
	if ring == nil {
		return nil
	}
	return ring.ordered()
}

// ResetRecords forgets submissions and logged params.
func (u *Upstream) ResetRecords() {
	s := &u.records
	s.mu.Lock()
	s.submissions = nil
	s.byMethod = map[string]*paramRing{}
	s.mu.Unlock()
}
