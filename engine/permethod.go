package engine

import (
	"maps"
	"strings"
	"sync"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// maxTrackedMethods bounds per-method state: method names come from
// clients, and each tracked method holds windows or counters. Only names
// known to exist take entries (methodNames).
const maxTrackedMethods = 128

// otherMethod is the entry methods past the cap share, where they share
// one (and their metrics label), with the names not known to exist.
const otherMethod = "other"

// maxMethodName bounds the method names rpcdash keeps statistics under and
// takes from the admin API.
const maxMethodName = 128

// isMethodName tells a name some node may serve: at most maxMethodName
// bytes, printable, without spaces or quotes.
func isMethodName(m string) bool {
	return m != "" && len(m) <= maxMethodName && redact.Sanitize(m, maxMethodName) == m && !strings.ContainsAny(m, " \"")
}

// perMethod is per-method state created on first use, at most
// maxTrackedMethods entries: past the cap a new method shares the
// otherMethod entry when shared is set, and gets none otherwise. Reads
// take a read lock only, so the request path does not contend on it.
type perMethod[V any] struct {
	mu     sync.RWMutex
	m      map[string]V
	shared bool
	create func(method string) V
}

func newPerMethod[V any](shared bool, create func(method string) V) *perMethod[V] {
	return &perMethod[V]{m: map[string]V{}, shared: shared, create: create}
}

// get returns method's entry, creating it on first use; ok is false only
// past the cap of a map that does not share (the method gets no state).
func (p *perMethod[V]) get(method string) (v V, ok bool) {
	if v, ok = p.lookup(method); ok {
		return v, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok = p.m[method]; ok {
		return v, true
	}
	if len(p.m) >= maxTrackedMethods {
		if !p.shared {
			return v, false
		}
		method = otherMethod
		if v, ok = p.m[method]; ok {
			return v, true
		}
	}
	v = p.create(method)
	p.m[method] = v
	return v, true
}

// lookup returns method's entry if it has one; it never creates one.
func (p *perMethod[V]) lookup(method string) (V, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.m[method]
	return v, ok
}

// all is a copy of the entries, to range over without the lock.
func (p *perMethod[V]) all() map[string]V {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return maps.Clone(p.m)
}
