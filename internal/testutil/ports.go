package testutil

import (
	"net"
	"testing"
)

// FreeAddrs returns n distinct loopback addresses (127.0.0.1:PORT) that
// were free a moment ago, for a child process that must be told its ports
// before it starts. Another process may take one in between: callers that
// can tell (the child exits at once) retry with new ones. Code in the test
// process listens on 127.0.0.1:0 instead.
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		// Held open until all are chosen, so that the n are distinct.
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}
