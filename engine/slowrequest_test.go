package engine_test

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// trickler is a client sending its request's start at once and the rest
// only as the test says, byte by byte as an attacker holding a slot does.
type trickler struct {
	c    net.Conn
	rest string
}

func dialTrickler(t *testing.T, addr, start, rest string) *trickler {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, start); err != nil {
		t.Fatal(err)
	}
	return &trickler{c: c, rest: rest}
}

// send writes the next n bytes of the request.
func (tr *trickler) send(t *testing.T, n int) {
	t.Helper()
	if _, err := io.WriteString(tr.c, tr.rest[:n]); err != nil {
		t.Fatal(err)
	}
	tr.rest = tr.rest[n:]
}

// closedByServer says whether the server closed the connection without
// an answer (read within 5 s: one left open is a failure, not a wait).
func (tr *trickler) closedByServer() bool {
	tr.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := tr.c.Read(make([]byte, 1))
	return n == 0 && err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// trickle has each client send n more bytes, one a second of the test's
// clock, each read by the server before the clock moves on.
func trickle(t *testing.T, h *harness, clock *testutil.Clock, admin bool, n int, clients ...*trickler) {
	t.Helper()
	for range n {
		want := h.eng.BytesArrived(admin) + uint64(len(clients))
		for _, c := range clients {
			c.send(t, 1)
		}
		testutil.WaitUntil(t, 5*time.Second, "the bytes read", func() bool { return h.eng.BytesArrived(admin) >= want })
		clock.Advance(time.Second)
	}
}

// freshDo sends one request on a new connection, as curl does.
func freshDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const chainIDCall = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`

// With every slot held by a client sending its request at 1 byte/s, a new
// client is served: the slowest of them makes room. They held every
// server.max_conns slot (or server.max_inflight one, below it) for
// server.read_timeout, and 74-89 % of new clients were refused while they
// kept at it; the admin port shares the cap.
func TestSlowRequest_AtTheCapTheSlowestMakesRoomForANewClient(t *testing.T) {
	t.Parallel()
	const slow = 3
	junk := "X-Slow: " + strings.Repeat("a", 64)
	body := strings.Repeat(" ", 64)
	cases := []struct {
		name         string
		admin        bool
		inflight     bool // server.max_inflight is the cap, not server.max_conns
		start        string
		method, path string
		body         string
	}{
		{name: "rpc header", start: "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n",
			method: "POST", path: "/", body: chainIDCall},
		{name: "rpc body", start: "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
			method: "POST", path: "/", body: chainIDCall},
		{name: "rpc body at max_inflight", inflight: true,
			start:  "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
			method: "POST", path: "/", body: chainIDCall},
		{name: "admin header", admin: true, start: "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n",
			method: "GET", path: "/v1/status?compact=1"},
		{name: "admin body", admin: true,
			start:  "PUT /v1/hedge HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
			method: "GET", path: "/v1/status?compact=1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clock := testutil.NewClock(testutil.Epoch)
			h := newClockedHarness(t, clock, func(cfg *engine.Config) {
				cfg.Server.MaxConns = slow
				if c.inflight {
					cfg.Server.MaxConns, cfg.Server.MaxInflight = 2*slow+2, slow
				}
			}, sim.Config{Latency: fixed(0)})
			addr, base := strings.TrimPrefix(h.rpc, "http://"), h.rpc
			if c.admin {
				addr, base = strings.TrimPrefix(h.admin, "http://"), h.admin
			}
			rest := junk
			if strings.Contains(c.start, "\r\n\r\n") {
				rest = body
			}
			var clients []*trickler
			for range slow {
				clients = append(clients, dialTrickler(t, addr, c.start, rest))
			}
			arriving := func() int {
				headers, bodies := h.eng.RequestsArriving(c.admin)
				if rest == body {
					return bodies
				}
				return headers
			}
			testutil.WaitUntil(t, 5*time.Second, "the slow requests arriving", func() bool { return arriving() == slow })
			trickle(t, h, clock, c.admin, 3, clients...)

			status, answer := freshDo(t, c.method, base+c.path, c.body)
			if status != http.StatusOK || !c.admin && !strings.Contains(answer, `"result"`) {
				t.Fatalf("beside %d requests arriving at 1 byte/s: HTTP %d %s; want it served, one of them making room", slow, status, answer)
			}
			testutil.WaitUntil(t, 5*time.Second, "one slow request taken, the others left", func() bool { return arriving() == slow-1 })
		})
	}
}

// Of two requests arriving, the slower makes room: one whose body comes
// at 300 bytes/s is left, and served once it has come, while one sending
// its header at 1 byte/s is closed. The oldest would have taken either.
func TestSlowRequest_AFasterRequestIsNotTakenBeforeASlowerOne(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, func(c *engine.Config) { c.Server.MaxConns = 2 }, sim.Config{Latency: fixed(0)})
	addr := strings.TrimPrefix(h.rpc, "http://")
	body := chainIDCall + strings.Repeat(" ", 1000)
	upload := dialTrickler(t, addr, fmt.Sprintf("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body)), body)
	testutil.WaitUntil(t, 5*time.Second, "the upload's body awaited", func() bool { _, bodies := h.eng.RequestsArriving(false); return bodies == 1 })
	slowest := dialTrickler(t, addr, "POST / HTTP/1.1\r\n", "Host: 127.0.0.1\r\n")
	testutil.WaitUntil(t, 5*time.Second, "both held", func() bool { return h.eng.ConnsHeld(false) == 2 })
	// One second of the test's clock: 300 bytes of the upload's body
	// (under minArrivalPace with its header: a candidate too), one of the
	// other's header.
	want := h.eng.BytesArrived(false) + 301
	upload.send(t, 300)
	slowest.send(t, 1)
	testutil.WaitUntil(t, 5*time.Second, "the bytes read", func() bool { return h.eng.BytesArrived(false) >= want })
	clock.Advance(time.Second)

	if status, answer := freshDo(t, "POST", h.rpc, chainIDCall); status != http.StatusOK {
		t.Fatalf("a new client at server.max_conns 2: HTTP %d %s; want the slowest request to make room", status, answer)
	}
	if !slowest.closedByServer() {
		t.Fatal("the request arriving at 1 byte/s was left open")
	}
	upload.send(t, len(upload.rest))
	resp, err := http.ReadResponse(bufio.NewReader(upload.c), nil)
	if err != nil {
		t.Fatalf("the upload at 300 bytes/s, taken instead of the slower one: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"result"`) {
		t.Fatalf("the upload: HTTP %d %s; want it served", resp.StatusCode, answer)
	}
}

// gatedUpstream answers every JSON-RPC call at once but eth_getBalance,
// which it holds until release is closed; entered says one is held.
func gatedUpstream(t *testing.T) (url string, entered <-chan struct{}, release chan struct{}) {
	in, rel := make(chan struct{}, 16), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&call); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if call.Method == "eth_getBalance" {
			in <- struct{}{}
			<-rel
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, call.ID)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, in, rel
}

// A request read whole is in flight and is never taken to make room,
// however slowly it came: the new client is refused instead, and the
// request is answered.
func TestSlowRequest_ARequestReadWholeIsNeverTaken(t *testing.T) {
	t.Parallel()
	// A deflate stream ends before the body's EOF, which a decoder never
	// reads: read whole all the same.
	for _, tc := range []struct{ limit, coding string }{
		{"server.max_conns", ""}, {"server.max_inflight", ""}, {"server.max_conns", "deflate"}, {"server.max_inflight", "deflate"},
	} {
		limit := tc.limit
		t.Run(strings.TrimSpace(limit+" "+tc.coding), func(t *testing.T) {
			t.Parallel()
			clock := testutil.NewClock(testutil.Epoch)
			url, entered, release := gatedUpstream(t)
			released := false
			defer func() {
				if !released {
					close(release)
				}
			}()
			h := newClockedHarness(t, clock, func(c *engine.Config) {
				c.Endpoints = []engine.EndpointConfig{{Name: "gated", URL: url, Provider: "p", Region: "r"}}
				c.Server.RequestTimeout = time.Minute
				c.Server.MaxConns = 1
				if limit == "server.max_inflight" {
					c.Server.MaxConns, c.Server.MaxInflight = 2, 1
				}
			})
			call := `{"jsonrpc":"2.0","id":7,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`
			body, encoding := call, ""
			if tc.coding == "deflate" {
				var b bytes.Buffer
				z := zlib.NewWriter(&b)
				z.Write([]byte(call))
				z.Close()
				body, encoding = b.String(), "Content-Encoding: deflate\r\n"
			}
			head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n", encoding, len(body))
			// Its header at once, then nothing for 10 s of the test's
			// clock, then its body: read whole at 16 bytes/s.
			inFlight := dialTrickler(t, strings.TrimPrefix(h.rpc, "http://"), head, body)
			testutil.WaitUntil(t, 5*time.Second, "its body awaited", func() bool { _, bodies := h.eng.RequestsArriving(false); return bodies == 1 })
			clock.Advance(10 * time.Second)
			inFlight.send(t, len(body))
			select {
			case <-entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the request never reached the upstream")
			}

			status, answer := freshDo(t, "POST", h.rpc, chainIDCall)
			if status != http.StatusServiceUnavailable || !strings.Contains(answer, limit) {
				t.Fatalf("a new client beside a request in flight at %s 1: HTTP %d %s; want 503 naming %s, the request in flight left alone", limit, status, answer, limit)
			}
			close(release)
			released = true
			resp, err := http.ReadResponse(bufio.NewReader(inFlight.c), nil)
			if err != nil {
				t.Fatalf("the request in flight: %v; want its answer", err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"result":"0x1"`) {
				t.Fatalf("the request in flight: HTTP %d %s; want its result", resp.StatusCode, got)
			}
		})
	}
}
