package engine

import "sync"

// trackGate orders the goroutines Shutdown waits for (e.wg) before that
// wait: sync.WaitGroup requires an Add from zero to happen before Wait,
// and a request handler cut at server.shutdown_timeout can still be
// starting attempts when the wait begins. Shutdown closes the gate under
// the write lock; an Add happens under the read lock, before the close or
// not at all.
type trackGate struct {
	sync.RWMutex
	closed bool
}

func (g *trackGate) close() {
	g.Lock()
	g.closed = true
	g.Unlock()
}

// track adds n goroutines to e.wg unless Shutdown has closed the gate,
// and says whether it did. One it did not add still runs: by then its
// context (the engine's base, or a request cut at the deadline) is done,
// so it ends at once.
func (e *Engine) track(n int) bool {
	e.gate.RLock()
	defer e.gate.RUnlock()
	if e.gate.closed {
		return false
	}
	e.wg.Add(n)
	return true
}
