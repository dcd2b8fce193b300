package sim

import (
	"bytes"
	"encoding/json"
	"sync"
)

// lastID remembers the id of the request that arrived before the current
// one, for mode foreign_id.
type lastID struct {
	mu   sync.Mutex
	prev json.RawMessage // the previous request's id
	cur  json.RawMessage // the current (latest) request's id
}

// swap records the first id of an arriving body.
func (l *lastID) swap(reqs []request) {
	if len(reqs) == 0 || reqs[0].ID == nil {
		return
	}
	l.mu.Lock()
	l.prev, l.cur = l.cur, bytes.Clone(reqs[0].ID)
	l.mu.Unlock()
}

// foreignIDs gives every call the id of another request: within a batch of
// two or more, its neighbour's; otherwise the previous request's, or a made-up
// one when that is the same. The answers otherwise follow the calls.
func (u *Upstream) foreignIDs(reqs []request, batch bool) []request {
	out := make([]request, len(reqs))
	copy(out, reqs)
	u.lastID.mu.Lock()
	prev := u.lastID.prev
	u.lastID.mu.Unlock()
	for i := range out {
		id := prev
		if batch && len(reqs) > 1 {
			id = reqs[(i+1)%len(reqs)].ID
		}
		if id == nil || bytes.Equal(id, reqs[i].ID) {
			id, _ = json.Marshal("foreign-" + string(reqs[i].ID))
		}
		out[i].ID = id
	}
	return out
}
