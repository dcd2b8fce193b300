package sim

import "sync"

// A transaction a sim took lands, as on a chain, where every node sees it:
// its hash (EVM) or signature (Solana) is known to every sim of the
// process, at the block or slot it landed in, and a node answers it once
// its own head has reached that block or slot (a node behind has not seen
// it yet). Sims in other processes know nothing of it.

// maxLanded bounds the refs held; the oldest are forgotten first.
const maxLanded = 1 << 16

type landedRefs struct {
	mu    sync.Mutex
	slot  map[string]int64 // ref → the block or slot it landed in
	order []string         // ring of the refs, oldest at next
	next  int
}

func newLandedRefs() *landedRefs { return &landedRefs{slot: map[string]int64{}} }

func (l *landedRefs) add(ref string, at int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.slot[ref]; ok {
		return // sent again: it landed once, where it first did
	}
	if len(l.order) < maxLanded {
		l.order = append(l.order, ref)
	} else {
		delete(l.slot, l.order[l.next])
		l.order[l.next] = ref
		l.next = (l.next + 1) % maxLanded
	}
	l.slot[ref] = at
}

func (l *landedRefs) at(ref string) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.slot[ref]
	return s, ok
}
