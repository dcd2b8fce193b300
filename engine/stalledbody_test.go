package engine_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// stalledBodyReadTimeout is server.read_timeout in the stalled-body tests:
// an answer given before the body is read must come well before it.
const stalledBodyReadTimeout = 2 * time.Second

// sendStalledBody sends a request announcing a 100-byte body and only 10
// bytes of it, then reads: the answer, and the connection's close. It
// returns the answer's status and body, how long the answer took, and
// whether the connection was closed (EOF) by the time read_timeout and a
// second had passed.
func sendStalledBody(t *testing.T, addr, method, path, headers string) (status int, body string, took time.Duration, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	began := time.Now()
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\n%sContent-Length: 100\r\n\r\n{\"jsonrpc\"", method, path, headers)
	c.SetReadDeadline(began.Add(stalledBodyReadTimeout + time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err.Error(), time.Since(began), false
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took = time.Since(began)
	if err != nil {
		return resp.StatusCode, string(b) + " (cut: " + err.Error() + ")", took, false
	}
	rest, err := io.ReadAll(br)
	return resp.StatusCode, string(b), took, err == nil && len(rest) == 0
}

// Every answer given before the body is read (a refusal, the health
// answer) is written at once to a client that stalls mid-body, and its
// connection closed within server.read_timeout. net/http reads the body to
// its end before writing such an answer, to keep the connection, and the
// RPC port has no read deadline but the body's: the client got nothing
// for as long as it held the connection, and 50 of them held every
// server.max_conns slot.
func TestLimits_AnswersBeforeTheBodyDoNotWaitForIt(t *testing.T) {
	t.Parallel()
	const json = "Content-Type: application/json\r\n"
	cases := []struct {
		name, method, path, headers string
		host                        string // 127.0.0.1 unless given
		mut                         func(*engine.Config)
		hang                        bool // an upstream request holds the one server.max_inflight slot
		admin                       bool
		status                      int
		says                        string
	}{
		{name: "PUT", method: "PUT", path: "/", headers: json, status: 405, says: "must be HTTP POST"},
		{name: "OPTIONS", method: "OPTIONS", path: "/", headers: json, status: 405, says: "must be HTTP POST"},
		{name: "foreign Origin", method: "POST", path: "/", headers: json + "Origin: https://evil.example\r\n", status: 403, says: "server.cors_origins"},
		{name: "rebound Host", method: "POST", path: "/", headers: json, host: "rebind.example", status: 403, says: "server.vhosts"},
		{name: "websocket", method: "GET", path: "/", headers: "Connection: Upgrade\r\nUpgrade: websocket\r\n", status: 501, says: "websocket"},
		{name: "health", method: "GET", path: "/healthz", status: 200, says: `"ok":true`},
		{name: "preflight", method: "OPTIONS", path: "/", headers: "Origin: https://dapp.example\r\nAccess-Control-Request-Method: POST\r\n",
			mut: func(c *engine.Config) { c.Server.CORSOrigins = []string{"https://dapp.example"} }, status: 204},
		{name: "max_inflight", method: "POST", path: "/", headers: json, hang: true,
			mut: func(c *engine.Config) { c.Server.MaxInflight = 1 }, status: 503, says: "server.max_inflight"},
		{name: "max_body_bytes", method: "POST", path: "/", headers: json,
			mut: func(c *engine.Config) { c.Server.MaxBodyBytes = 50 }, status: 413, says: "server.max_body_bytes"},
		{name: "admin PATCH", method: "PATCH", path: "/v1/hedge", headers: json, admin: true, status: 405, says: "takes PUT"},
		{name: "admin text/plain from a page", method: "POST", path: "/v1/endpoints/s0/fault", headers: "Content-Type: text/plain\r\nOrigin: https://dapp.example\r\n", admin: true,
			mut: func(c *engine.Config) { c.Server.CORSOrigins = []string{"https://dapp.example"} }, status: 415, says: "application/json"},
		{name: "admin role of no endpoint", method: "PUT", path: "/v1/endpoints/nobody/role", headers: json, admin: true, status: 404, says: "nobody"},
		{name: "admin token", method: "PUT", path: "/v1/hedge", headers: json, admin: true,
			mut: func(c *engine.Config) { c.Server.AdminToken = "secret" }, status: 401, says: "server.admin_token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(cfg *engine.Config) {
				cfg.Server.ReadTimeout = stalledBodyReadTimeout
				if c.mut != nil {
					c.mut(cfg)
				}
			}, sim.Config{Latency: fixed(0)})
			if c.hang {
				h.sims[0].SetMode(sim.ModeHang)
				done := make(chan struct{})
				go func() { defer close(done); h.call(1, "eth_getBalance", addr, "latest") }()
				defer func() { h.sims[0].Close(); <-done }() // releases the hung request
				testutil.WaitUntil(t, 5*time.Second, "a request hanging upstream", func() bool { return h.sims[0].Counters().Hanging == 1 })
			}
			addr := strings.TrimPrefix(h.rpc, "http://")
			if c.admin {
				addr = strings.TrimPrefix(h.admin, "http://")
			}
			host := c.host
			if host == "" {
				host = "127.0.0.1"
			}
			status, body, took, closed := sendStalledBody(t, addr, c.method, c.path, "Host: "+host+"\r\n"+c.headers)
			if status != c.status || !strings.Contains(body, c.says) || took > stalledBodyReadTimeout/2 {
				t.Fatalf("HTTP %d after %s: %s; want %d saying %s at once, well before server.read_timeout (%s)",
					status, took, body, c.status, c.says, stalledBodyReadTimeout)
			}
			if !closed {
				t.Fatalf("the connection was still open %s after the answer, past server.read_timeout (%s)", time.Second, stalledBodyReadTimeout)
			}
		})
	}
}
