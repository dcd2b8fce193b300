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
}

func (t *connTracker) track(c net.Conn, state http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if state == http.StateNew {
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
	for c := range t.conns {
		c.Close()
	}
	clear(t.conns)
}
