package engine_test

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// slowSocks is a SOCKS5 proxy on loopback whose every connection takes
// delay to be made: a slow proxy, a SYN lost and sent again, a far TLS
// handshake.
func slowSocks(t *testing.T, delay time.Duration) string {
	t.Helper()
	return "socks5://" + testutil.ServeTCP(t, func(c net.Conn) {
		b := make([]byte, 262)
		if _, err := io.ReadFull(c, b[:2]); err != nil {
			return
		}
		io.ReadFull(c, b[:b[1]])
		c.Write([]byte{5, 0})
		io.ReadFull(c, b[:4])
		if b[3] != 1 { // an IPv4 address: loopback
			return
		}
		io.ReadFull(c, b[:6])
		to := net.JoinHostPort(net.IP(b[:4]).String(), strconv.Itoa(int(binary.BigEndian.Uint16(b[4:6]))))
		time.Sleep(delay)
		u, err := net.Dial("tcp", to)
		if err != nil {
			c.Write([]byte{5, 1, 0, 1, 0, 0, 0, 0, 0, 0})
			return
		}
		defer u.Close()
		c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
		go func() { io.Copy(u, c); u.Close() }() // c closed at the test's end closes u
		io.Copy(c, u)
	})
}

// A write after the idle connections closed needs a new one, and through a
// slow proxy that takes 1.3 s. At a connect bound of one second the write
// was given up on at its first endpoint, cost a second more at the next,
// and charged the healthy first with a failure ("no connection within
// 1s"). The bound is at least 2 s.
func TestWrite_ASlowConnectionIsWaitedForUpToTheBoundsFloor(t *testing.T) {
	t.Parallel()
	proxy := slowSocks(t, 1300*time.Millisecond)
	h := newHarness(t, func(c *engine.Config) {
		for i := range c.Endpoints {
			c.Endpoints[i].Proxy = proxy
		}
	}, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	for i := range 600 { // learnt deadlines: the floor's 250 ms, past the first reads' 1.3 s connections
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	time.Sleep(4500 * time.Millisecond) // the idle connections closed (idleConnTimeout 4 s)
	w := h.call(100, "eth_sendRawTransaction", "0x01")
	mustOK(t, w)
	if w.attempts != 1 || w.took > 1900*time.Millisecond {
		t.Fatalf("write answered by %s after %d attempts in %s; want one attempt, the 1.3 s connection waited for", w.endpoint, w.attempts, w.took)
	}
	for _, name := range []string{"s0", "s1"} {
		if ep := h.endpoint(name); strings.Contains(ep.LastError, "no connection within") {
			t.Fatalf("%s charged: %q", name, ep.LastError)
		}
	}
}
