package probes

import (
	"fmt"
	"sync"

	"github.com/rpcdash/rpcdash/engine"
)

// excluder is the part of the engine the identity verdicts act on.
type excluder interface {
	Exclude(name, kind, reason string)
	Include(name, kind string)
}

// identityTracker decides which chain the pool is on and keeps endpoints on
// another one excluded. The expected identity is the configured one when
// set, otherwise the majority of each endpoint's first answer (ties go to
// the answer of the lowest-indexed endpoint). Without a configured value no
// verdict is given until every endpoint's first identity probe has ended,
// so that the first endpoint to answer does not decide for the pool alone.
type identityTracker struct {
	spec  chainSpec
	eng   excluder
	names []string // endpoint order: the tie-break

	mu      sync.Mutex
	fixed   string // configured identity, canonical ("" = majority)
	first   map[string]string
	latest  map[string]string
	wrong   map[string]bool
	pending map[string]bool // first identity probe not ended yet
	settled chan struct{}   // closed when pending is empty
}

func newIdentityTracker(spec chainSpec, eng excluder, names []string, fixed string) *identityTracker {
	t := &identityTracker{
		spec: spec, eng: eng, names: names, fixed: fixed,
		first: map[string]string{}, latest: map[string]string{}, wrong: map[string]bool{},
		pending: map[string]bool{}, settled: make(chan struct{}),
	}
	for _, n := range names {
		t.pending[n] = true
	}
	if fixed != "" || len(names) == 0 {
		close(t.settled)
	}
	return t
}

// record takes an endpoint's identity answer and re-judges the pool.
func (t *identityTracker) record(name, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.first[name]; !ok {
		t.first[name] = id
	}
	t.latest[name] = id
	t.judgeLocked()
}

// firstDone marks an endpoint's first identity probe as ended, answered or
// not.
func (t *identityTracker) firstDone(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.pending[name] {
		return
	}
	delete(t.pending, name)
	if len(t.pending) == 0 && t.fixed == "" {
		close(t.settled)
		t.judgeLocked()
	}
}

// isWrong says whether the endpoint is known to be on another chain.
func (t *identityTracker) isWrong(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wrong[name]
}

func (t *identityTracker) isSettled() bool {
	select {
	case <-t.settled:
		return true
	default:
		return false
	}
}

// expectedLocked is the identity the pool is on, and how it was decided.
func (t *identityTracker) expectedLocked() (id, source string) {
	if t.fixed != "" {
		return t.fixed, t.spec.configKey + " is"
	}
	count := map[string]int{}
	for _, n := range t.names {
		if v, ok := t.first[n]; ok {
			count[v]++
		}
	}
	best := 0
	for _, n := range t.names { // lowest index wins a tie: strict >
		if v, ok := t.first[n]; ok && count[v] > best {
			id, best = v, count[v]
		}
	}
	return id, "pool is on"
}

// judgeLocked excludes every endpoint whose latest answer differs from the
// expected identity and readmits the ones that match again. Verdicts are
// applied under the lock so that two judgements never interleave.
func (t *identityTracker) judgeLocked() {
	if !t.isSettled() {
		return
	}
	want, source := t.expectedLocked()
	if want == "" {
		return
	}
	for _, n := range t.names {
		got, ok := t.latest[n]
		if !ok {
			continue
		}
		if got == want {
			if t.wrong[n] {
				delete(t.wrong, n)
				t.eng.Include(n, engine.ExcludeWrongChain)
			}
			continue
		}
		t.wrong[n] = true
		t.eng.Exclude(n, engine.ExcludeWrongChain, fmt.Sprintf("on %s %s, %s %s",
			t.spec.identityNoun, t.spec.describeIdentity(got), source, t.spec.describeIdentity(want)))
	}
}
