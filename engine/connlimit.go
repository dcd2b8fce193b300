package engine

import (
	"bufio"
	"container/list"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// connLimitListener caps the connections a port holds open at once. At
// the cap, a keep-alive connection idle between two requests for at least
// reclaimIdleAfter is closed to make room (the one idle longest), as nginx
// reuses idle connections: one client holding every connection idle (a
// request on each every two minutes keeps idle_timeout off) kept every new
// connection out. A connection idle a moment is never taken: its client is
// likely to write on it, and its request would be lost. With none idle that
// long, the connection whose request is arriving the slowest makes room
// (evictSlowest, slowrequest.go). Otherwise a connection past the cap is
// not left waiting in the accept queue, where a client sees only silence:
// it is told "503, server.max_conns reached" and closed. Telling costs a
// goroutine for at most refuseTimeout, and at most maxRefusing of them run
// at once; past that a connection is closed without a word, so a flood
// cannot turn the refusals into the leak the cap prevents.
type connLimitListener struct {
	net.Listener
	slots    chan struct{}
	refusing chan struct{}
	body     []byte
	wg       sync.WaitGroup // refusals in progress, waited for by Close

	now func() time.Time
	// readTimeout bounds the wait for the rest of a request whose first
	// bytes came on a connection idle between two requests (limitedConn.Read).
	readTimeout time.Duration
	mu          sync.Mutex
	idle        list.List // of *limitedConn between two requests, idle longest at the front
	idleAt      map[*limitedConn]*list.Element
	open        map[*limitedConn]struct{} // every connection holding a slot
}

const (
	// reclaimIdleAfter: Node's HTTP agent drops a socket idle 5 s itself,
	// and a client pausing longer between requests pays one reconnect.
	reclaimIdleAfter = 5 * time.Second
	maxRefusing      = 64
	refuseTimeout    = 500 * time.Millisecond
	// refuseHeaderBytes bounds what a refusal reads of its request: a
	// client streaming an endless header line would otherwise grow the
	// line's buffer for as long as refuseTimeout lets it, 100+ MB a
	// connection on loopback.
	refuseHeaderBytes = 64 << 10
)

func newConnLimitListener(ln net.Listener, limit int, setting string, readTimeout time.Duration, now func() time.Time) *connLimitListener {
	err := &jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded, Message: fmt.Sprintf("too many connections: %s (%d) reached; try again shortly", setting, limit)}
	return &connLimitListener{
		Listener:    ln,
		slots:       make(chan struct{}, limit),
		refusing:    make(chan struct{}, maxRefusing),
		body:        jsonrpc.AppendError(nil, nil, err),
		now:         now,
		readTimeout: readTimeout,
		idleAt:      map[*limitedConn]*list.Element{},
		open:        map[*limitedConn]struct{}{},
	}
}

// noteState follows an accepted connection's state (http.Server's
// ConnState): only one idle between two requests may make room.
func (l *connLimitListener) noteState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.idleAt[lc]; ok {
		l.idle.Remove(el)
		delete(l.idleAt, lc)
	}
	lc.idle.Store(state == http.StateIdle)
	lc.nextBytes.Store(false)
	lc.noteStage(state)
	if state == http.StateIdle {
		lc.idleSince, lc.readsAtIdle = l.now(), lc.reads.Load()
		l.idleAt[lc] = l.idle.PushBack(lc)
	}
}

// reclaimIdle closes the connection idle longest, freeing its slot, when
// it has been idle reclaimIdleAfter and no byte of a next request has come
// in on it; false when none has. net/http counts a connection idle until
// a whole request header is in: one whose header was arriving was closed,
// and its request lost (review, stop 55).
func (l *connLimitListener) reclaimIdle() bool {
	l.mu.Lock()
	now := l.now()
	for el := l.idle.Front(); el != nil; el = el.Next() {
		lc := el.Value.(*limitedConn)
		if now.Sub(lc.idleSince) < reclaimIdleAfter {
			break
		}
		if lc.reads.Load() != lc.readsAtIdle {
			continue
		}
		l.idle.Remove(el)
		delete(l.idleAt, lc)
		l.mu.Unlock()
		lc.Close()
		return true
	}
	l.mu.Unlock()
	return false
}

func (l *connLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		for {
			select {
			case l.slots <- struct{}{}:
				return l.track(c), nil
			default:
			}
			if !l.reclaimIdle() && !l.evictSlowest(false) {
				break
			}
		}
		select {
		case l.refusing <- struct{}{}:
			l.wg.Add(1)
			go l.refuse(c)
		default:
			c.Close()
		}
	}
}

// refuse answers an over-cap connection's first request with 503. The
// request is read first (within refuseTimeout and refuseHeaderBytes) so
// that closing does not reset the connection before the client has read
// the answer; one whose header does not fit the bound is closed unanswered.
func (l *connLimitListener) refuse(c net.Conn) {
	defer func() { <-l.refusing; l.wg.Done() }()
	defer c.Close()
	c.SetDeadline(time.Now().Add(refuseTimeout))
	bounded := &io.LimitedReader{R: c, N: refuseHeaderBytes}
	if req, err := http.ReadRequest(bufio.NewReaderSize(bounded, 4096)); err == nil {
		req.Body.Close()
	} else if bounded.N == 0 {
		return
	}
	// The answer gets its own time: a client that had not sent its request
	// by the read deadline still finds the 503 waiting, not a bare close.
	c.SetWriteDeadline(time.Now().Add(refuseTimeout))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n", len(l.body))
	c.Write(l.body)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// track wraps a connection given a slot; its request is arriving from now.
func (l *connLimitListener) track(c net.Conn) *limitedConn {
	lc := &limitedConn{Conn: c, owner: l, readTimeout: l.readTimeout}
	lc.release = func() {
		l.mu.Lock()
		delete(l.open, lc)
		l.mu.Unlock()
		<-l.slots
	}
	lc.beginRequest(l.now(), 0)
	l.mu.Lock()
	l.open[lc] = struct{}{}
	l.mu.Unlock()
	return lc
}

func (l *connLimitListener) Close() error {
	err := l.Listener.Close()
	l.wg.Wait()
	return err
}

// limitedConn frees its slot once, however often it is closed.
type limitedConn struct {
	net.Conn
	owner     *connLimitListener
	once      sync.Once
	release   func()
	idleSince time.Time // guarded by the listener's mu
	// reads counts the reads that returned bytes, readsAtIdle (the
	// listener's mu) what it was as the connection went idle.
	reads       atomic.Uint64
	readsAtIdle uint64
	// idle: between two requests (noteState); nextBytes: the next
	// request's first bytes have come since.
	idle        atomic.Bool
	nextBytes   atomic.Bool
	readTimeout time.Duration
	progress    requestProgress
}

// Read gives the rest of a request whose first bytes came on a connection
// idle between two requests server.read_timeout from those bytes. net/http
// waits for four bytes under server.idle_timeout before it starts reading
// a request: one to three bytes sent after a finished request held the
// connection for the 2 minutes of idle_timeout, and, its request begun, it
// is never reclaimed at the cap (256 such connections kept every new client
// out for 110 s). Once the four are in, net/http's own header deadline
// (server.read_timeout as well) replaces this one.
func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.reads.Add(1)
		before := c.progress.bytes.Add(uint64(n)) - uint64(n)
		if c.idle.Load() && c.nextBytes.CompareAndSwap(false, true) {
			c.beginRequest(c.owner.now(), before)
			if c.readTimeout > 0 {
				c.Conn.SetReadDeadline(time.Now().Add(c.readTimeout))
			}
		}
	}
	return n, err
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
