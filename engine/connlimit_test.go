package engine

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// countingListener counts the bytes read from the connections it accepts.
type countingListener struct {
	net.Listener
	read atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, read: &l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// A connection over server.max_conns that streams an endless header line
// is read only up to refuseHeaderBytes and closed without an answer: the
// refusal read the line for as long as refuseTimeout let it, 100+ MB a
// connection on loopback.
func TestConnLimit_EndlessHeaderReadOnlyToTheBound(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: tcp}
	ln := newConnLimitListener(counted, 1, "server.max_conns", 0, time.Now)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	holder, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	held := <-accepted // the one slot is taken
	defer held.Close()

	c, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const stream = 10 << 20
	// A fixed send buffer: what the kernels hold for the client stays far
	// below the stream, so its writes fail once the server has closed.
	c.(*net.TCPConn).SetWriteBuffer(64 << 10)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	written, _ := io.WriteString(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Junk: ")
	line := bytes.Repeat([]byte("a"), 64<<10)
	var werr error
	for written < stream && werr == nil {
		var n int
		n, werr = c.Write(line)
		written += n
	}
	answer, rerr := io.ReadAll(c)
	ln.Close() // waits for the refusal to end
	if n := counted.read.Load(); n > refuseHeaderBytes+4096 {
		t.Fatalf("the refusal read %d bytes of the header, want at most %d and its read buffer", n, refuseHeaderBytes)
	}
	if werr == nil || len(answer) != 0 || rerr != nil && !errors.Is(rerr, syscall.ECONNRESET) {
		t.Fatalf("the client wrote %d bytes of header (write error %v) and read %q (%v); want the connection closed without an answer",
			written, werr, answer, rerr)
	}
}
