package engine

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"time"
)

// filterTable maps the filter ids rpcdash hands out to the endpoint that
// holds each filter and the id that endpoint gave it. Nodes number their
// filters on their own (many count 0x1, 0x2, …), so two endpoints often
// hand out the same id: the id a client sees must name the endpoint too.
//
// The table is bounded: an entry not used (created or polled) for
// filterTTL is dropped, as nodes drop a filter nobody polls, and past
// maxFilters entries the least recently used one makes room. A client
// creating filters without end costs at most maxFilters entries.
type filterTable struct {
	mu   sync.Mutex
	now  func() time.Time
	byID map[string]*list.Element // client id → element holding *filterPin
	lru  list.List                // front: most recently used
}

type filterPin struct {
	id       string // the id the client sees
	ep       *endpoint
	upstream string // the id the endpoint gave
	used     time.Time
}

const (
	// maxFilters bounds the table (about 200 bytes an entry).
	maxFilters = 10000
	// filterTTL is twice the 5 minutes after which geth and most providers
	// drop a filter nobody polls: a filter its node still holds is never
	// forgotten here first.
	filterTTL = 10 * time.Minute
	// maxUpstreamFilterID bounds the id an endpoint may give a filter; node
	// ids are 34 characters at most.
	maxUpstreamFilterID = 256
)

func newFilterTable(now func() time.Time) *filterTable {
	return &filterTable{now: now, byID: map[string]*list.Element{}}
}

// pin records a filter the endpoint created under upstream id and returns
// the id the client is to use.
func (f *filterTable) pin(ep *endpoint, upstream string) string {
	id := newFilterID()
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.expire(now)
	for len(f.byID) >= maxFilters {
		f.remove(f.lru.Back())
	}
	f.byID[id] = f.lru.PushFront(&filterPin{id: id, ep: ep, upstream: upstream, used: now})
	return id
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
	delete(f.byID, el.Value.(*filterPin).id)
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
