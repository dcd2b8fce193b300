package engine

import (
	"net"
	"net/http"
	"sync"
)

// connTracker knows the connections that have not yet sent a complete
// request header, so that Shutdown can close them at once: net/http
// counts such a connection idle only after 5 s, and a client trickling
// its header would hold shutdown that long.
type connTracker struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	// shut: closeAll has run. A connection accepted just before the
	// listener closed can reach StateNew after it (net/http runs shutdown
	// hooks in goroutines); it is closed at once rather than left for
	// net/http's 5 s wait on new connections.
	shut bool
}

func (t *connTracker) track(c net.Conn, state http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if state == http.StateNew {
		if t.shut {
			c.Close()
			return
		}
		if t.conns == nil {
			t.conns = map[net.Conn]struct{}{}
		}
		t.conns[c] = struct{}{}
		return
	}
	delete(t.conns, c)
}

func (t *connTracker) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.shut = true
	for c := range t.conns {
		c.Close()
	}
	clear(t.conns)
}
