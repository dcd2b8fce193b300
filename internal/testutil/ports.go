package testutil

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreeAddrs returns n distinct loopback addresses (127.0.0.1:PORT) that
// were free a moment ago, for a child process that must be told its ports
// before it starts. They are drawn below the kernel's ephemeral range
// (ip_local_port_range), which listeners on port 0 and every outgoing
// connection draw from: a port taken from that range and let go was
// taken again by another test's connection before the child bound it
// ("address already in use" in a CI run). Another process may still take
// one in between: callers that can tell (the child exits at once) retry
// with new ones. Code in the test process listens on 127.0.0.1:0 instead.
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	low := ephemeralLow()
	addrs := make([]string, 0, n)
	for tries := 0; len(addrs) < n; tries++ {
		var l net.Listener
		var err error
		if low > 10000 && tries < 200 {
			l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 10000+rand.IntN(low-10000)))
			if err != nil {
				continue // taken: draw another
			}
		} else if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		// Held open until all are chosen, so that the n are distinct.
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}

// FreePortRun returns the first of n consecutive loopback ports that were
// free a moment ago, drawn below the ephemeral range as FreeAddrs's are,
// for a child told to listen on a port and the ones above it.
func FreePortRun(t testing.TB, n int) int {
	t.Helper()
	low := ephemeralLow()
	for tries := 0; tries < 200; tries++ {
		first := 0
		var held []net.Listener
		if low > 10000+n {
			first = 10000 + rand.IntN(low-10000-n)
		}
		for i := 0; i < n; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", first+i))
			if err != nil {
				break
			}
			if first == 0 { // not Linux: the kernel's choice, then the ports above it
				first = l.Addr().(*net.TCPAddr).Port
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if len(held) == n {
			return first
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}

// ephemeralLow is the first port of the kernel's ephemeral range, 0 when
// it cannot be read (not Linux).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	low, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return low
}
