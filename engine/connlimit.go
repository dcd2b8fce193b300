package engine

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// connLimitListener caps the connections a port holds open at once. A
// connection past the cap is not left waiting in the accept queue, where a
// client sees only silence: it is told "503, server.max_conns reached" and
// closed. Telling costs a goroutine for at most refuseTimeout, and at most
// maxRefusing of them run at once; past that a connection is closed
// without a word, so a flood cannot turn the refusals into the leak the
// cap prevents.
type connLimitListener struct {
	net.Listener
	slots    chan struct{}
	refusing chan struct{}
	body     []byte
	wg       sync.WaitGroup // refusals in progress, waited for by Close
}

const (
	maxRefusing   = 64
	refuseTimeout = 500 * time.Millisecond
	// refuseHeaderBytes bounds what a refusal reads of its request: a
	// client streaming an endless header line would otherwise grow the
	// line's buffer for as long as refuseTimeout lets it, 100+ MB a
	// connection on loopback.
	refuseHeaderBytes = 64 << 10
)

func newConnLimitListener(ln net.Listener, limit int, setting string) *connLimitListener {
	err := &jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded, Message: fmt.Sprintf("too many connections: %s (%d) reached; try again shortly", setting, limit)}
	return &connLimitListener{
		Listener: ln,
		slots:    make(chan struct{}, limit),
		refusing: make(chan struct{}, maxRefusing),
		body:     jsonrpc.AppendError(nil, nil, err),
	}
}

func (l *connLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
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

func (l *connLimitListener) Close() error {
	err := l.Listener.Close()
	l.wg.Wait()
	return err
}

// limitedConn frees its slot once, however often it is closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
