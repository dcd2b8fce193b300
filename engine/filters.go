package engine

import (
	"sync"
)

// filterPins remembers which endpoint holds each filter created through
// rpcdash, so that polls and uninstalls reach the node that has the state.
type filterPins struct {
	mu   sync.Mutex
	byID map[string]*endpoint
}

// maxFilters bounds the table; the oldest pins are not tracked by age, so
// past the bound new filters are refused rather than silently forgotten.
const maxFilters = 10000

func newFilterPins() *filterPins { return &filterPins{byID: map[string]*endpoint{}} }

func (f *filterPins) pin(id string, ep *endpoint) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.byID) >= maxFilters {
		return false
	}
	f.byID[id] = ep
	return true
}

func (f *filterPins) lookup(id string) (*endpoint, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ep, ok := f.byID[id]
	return ep, ok
}

func (f *filterPins) unpin(id string) {
	f.mu.Lock()
	delete(f.byID, id)
	f.mu.Unlock()
}
