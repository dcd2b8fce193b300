package sim

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
)

// filterSeq is process-wide so that no two upstreams ever hand out the same
// id: a filter polled on the wrong upstream is always "not found".
var filterSeq atomic.Uint64

type filterState struct {
	mu   sync.Mutex
	ids  map[string]bool
	next uint64 // the last sequential id handed out
}

func newFilter(u *Upstream, _ []json.RawMessage) (any, *Error) {
	// Multiplying by an odd constant is a bijection: ids stay unique but
	// do not look like a counter.
	id := fmt.Sprintf("0x%x", filterSeq.Add(1)*0x9e3779b97f4a7c15)
	u.filters.mu.Lock()
	if u.cfg.SequentialFilterIDs {
		u.filters.next++
		id = fmt.Sprintf("0x%x", u.filters.next)
	}
	u.filters.ids[id] = true
	u.filters.mu.Unlock()
	return id, nil
}

func (u *Upstream) hasFilter(id string) bool {
	u.filters.mu.Lock()
	defer u.filters.mu.Unlock()
	return u.filters.ids[id]
}

func getFilter(u *Upstream, args []json.RawMessage) (any, *Error) {
	id, ok := stringArg(args, 0)
	if !ok {
		return nil, invalidParams("want [filterId]")
	}
	if !u.hasFilter(id) {
		return nil, &Error{Code: CodeServerError, Message: "filter not found"}
	}
	return []any{}, nil
}

func uninstallFilter(u *Upstream, args []json.RawMessage) (any, *Error) {
	id, ok := stringArg(args, 0)
	if !ok {
		return nil, invalidParams("want [filterId]")
	}
	u.filters.mu.Lock()
	defer u.filters.mu.Unlock()
	existed := u.filters.ids[id]
	delete(u.filters.ids, id)
	return existed, nil
}

// Filters returns how many filters this upstream currently holds.
func (u *Upstream) Filters() int {
	u.filters.mu.Lock()
	defer u.filters.mu.Unlock()
	return len(u.filters.ids)
}
