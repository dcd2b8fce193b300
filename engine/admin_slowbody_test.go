package engine_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An admin call whose body stops arriving is answered, at
// server.read_timeout, 408 with an error naming that key, as the RPC
// port answers one: not a 400 that says only the body "could not be read".
func TestAdmin_SlowBodyIs408NamingReadTimeout(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.ReadTimeout = 200 * time.Millisecond }, sim.Config{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.admin, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Half the body announced; the rest never comes.
	io.WriteString(conn, "PUT /v1/hedge HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"enabled\":")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "server.read_timeout") {
		t.Fatalf("HTTP %d %s: want 408 naming server.read_timeout", resp.StatusCode, body)
	}
}
