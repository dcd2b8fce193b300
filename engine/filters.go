package engine

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// filterTable maps the filter ids rpcdash hands out to the endpoint that
// holds each filter and the id that endpoint gave it. Nodes number their
// filters on their own (many count 0x1, 0x2, …), so two endpoints often
// hand out the same id: the id a client sees must name the endpoint too.
//
// The table is bounded: an entry not used (created or polled) for
// filterTTL is dropped, as nodes drop a filter nobody polls, and at
// maxFilters entries room is made for a new filter by the least recently
// used one once it has gone filterRoomAfter without a poll, or else by the
// oldest never polled once it is unpolledRoomAfter old; until then a
// filter creation is refused (hasRoom). Room made at once for any new
// filter let one client's 15 batches of 1,000 eth_newBlockFilter, sent in
// 2-3 s, push out another client's filter polled 3 s before: its next
// poll was told the filter was not found, and the filter was left on its
// node. Room made only by filters unpolled for a minute let such a flood,
// never polled, refuse every other client's filters for that minute. A
// client creating filters without end costs at most maxFilters entries,
// takes no filter a client still polls, and refuses others' for seconds.
type filterTable struct {
	mu   sync.Mutex
	now  func() time.Time
	max  int                      // maxFilters (a test's own bound)
	byID map[string]*list.Element // client id → element holding *filterPin
	lru  list.List                // front: most recently used
	// unpolled holds the lru elements of the filters never polled, oldest
	// at the front.
	unpolled list.List
}

type filterPin struct {
	id       string // the id the client sees
	ep       *endpoint
	upstream string // the id the endpoint gave
	used     time.Time
	created  time.Time
	unpolled *list.Element // its element in filterTable.unpolled; nil once polled
}

const (
	// maxFilters bounds the table (about 200 bytes an entry).
	maxFilters = 10000
	// filterRoomAfter: a filter unpolled this long makes room for a new
	// one in a full table; clients poll theirs every few seconds.
	filterRoomAfter = time.Minute
	// unpolledRoomAfter: a filter never polled this long after its
	// creation makes room too: clients poll a filter they made within a
	// few seconds (viem every 4 s, ethers every 4 s, web3.js every 1 s).
	unpolledRoomAfter = 10 * time.Second
	// filterTTL is twice the 5 minutes after which geth and most providers
	// drop a filter nobody polls: a filter its node still holds is never
	// forgotten here first.
	filterTTL = 10 * time.Minute
	// maxUpstreamFilterID bounds the id an endpoint may give a filter; node
	// ids are 34 characters at most.
	maxUpstreamFilterID = 256
)

func newFilterTable(now func() time.Time) *filterTable {
	return &filterTable{now: now, max: maxFilters, byID: map[string]*list.Element{}}
}

// hasRoom says whether a new filter may be created: the table is not full,
// or a filter may make room (roomMaker).
func (f *filterTable) hasRoom() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.expire(now)
	return len(f.byID) < f.max || f.roomMaker(now) != nil
}

// roomMaker is the lru element of the filter that makes room for a new one
// in a full table: the least recently used once it has gone
// filterRoomAfter unpolled, else the oldest never polled once it is
// unpolledRoomAfter old; nil when none may. f.mu is held.
func (f *filterTable) roomMaker(now time.Time) *list.Element {
	if back := f.lru.Back(); back != nil && now.Sub(back.Value.(*filterPin).used) >= filterRoomAfter {
		return back
	}
	if old := f.unpolled.Front(); old != nil {
		el := old.Value.(*list.Element)
		if now.Sub(el.Value.(*filterPin).created) >= unpolledRoomAfter {
			return el
		}
	}
	return nil
}

// pin records a filter the endpoint created under upstream id and returns
// the id the client is to use; false when the table has no room (hasRoom:
// creations racing past the check, a batch of them).
func (f *filterTable) pin(ep *endpoint, upstream string) (string, bool) {
	id := newFilterID()
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.expire(now)
	for len(f.byID) >= f.max {
		el := f.roomMaker(now)
		if el == nil {
			return "", false
		}
		f.remove(el)
	}
	p := &filterPin{id: id, ep: ep, upstream: upstream, used: now, created: now}
	el := f.lru.PushFront(p)
	p.unpolled = f.unpolled.PushBack(el)
	f.byID[id] = el
	return id, true
}

// fullError is a filter creation's error when the table has no room; made
// names the endpoint that created the filter all the same (the creations
// of one batch racing past hasRoom), which drops it unpolled.
func (f *filterTable) fullError(made string) *jsonrpc.Error {
	msg := fmt.Sprintf("filter limit: rpcdash holds %d filters, each polled within the last %s or created within the last %s; uninstall the filters no longer polled (eth_uninstallFilter) and create this one again", f.max, filterRoomAfter, unpolledRoomAfter)
	if made != "" {
		msg += fmt.Sprintf(" (%s created it, and drops it unpolled)", made)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded, Message: msg}
}

// lookup finds the endpoint and upstream id of a client's filter id and
// counts the lookup as a use.
func (f *filterTable) lookup(id string) (*endpoint, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.expire(now)
	el, ok := f.byID[id]
	if !ok {
		return nil, "", false
	}
	p := el.Value.(*filterPin)
	p.used = now
	if p.unpolled != nil {
		f.unpolled.Remove(p.unpolled)
		p.unpolled = nil
	}
	f.lru.MoveToFront(el)
	return p.ep, p.upstream, true
}

func (f *filterTable) unpin(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if el, ok := f.byID[id]; ok {
		f.remove(el)
	}
}

// len is how many filters are tracked.
func (f *filterTable) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.byID)
}

// heldBy is how many tracked filters ep holds (a role change says so).
func (f *filterTable) heldBy(ep *endpoint) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expire(f.now())
	n := 0
	for _, el := range f.byID {
		if el.Value.(*filterPin).ep == ep {
			n++
		}
	}
	return n
}

// expire drops the entries unused for filterTTL: they sit at the back.
func (f *filterTable) expire(now time.Time) {
	for el := f.lru.Back(); el != nil && now.Sub(el.Value.(*filterPin).used) >= filterTTL; el = f.lru.Back() {
		f.remove(el)
	}
}

func (f *filterTable) remove(el *list.Element) {
	p := el.Value.(*filterPin)
	delete(f.byID, p.id)
	if p.unpolled != nil {
		f.unpolled.Remove(p.unpolled)
		p.unpolled = nil
	}
	f.lru.Remove(el)
}

// newFilterID is a random 128-bit hex quantity, as geth's ids are: unique
// across endpoints and restarts, and not guessable by another client.
func newFilterID() string {
	var b [16]byte
	rand.Read(b[:])
	s := strings.TrimLeft(hex.EncodeToString(b[:]), "0")
	if s == "" {
		s = "0"
	}
	return "0x" + s
}
