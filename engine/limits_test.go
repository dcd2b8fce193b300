package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// tinyBatch is a batch of n elements of two bytes each ("1,").
func tinyBatch(n int) []byte {
	b := append([]byte{'['}, bytes.Repeat([]byte("1,"), n)...)
	b[len(b)-1] = ']'
	return b
}

// The batch size is checked while scanning: millions of elements cost a
// few bytes, not a few hundred MB, before the -32005.
func TestLimits_BatchRefusedWhileScanning(t *testing.T) {
	body := tinyBatch(2_600_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, perr := jsonrpc.ParseBodyLimit(body, 100)
	runtime.ReadMemStats(&after)
	if perr == nil || perr.Code != jsonrpc.CodeLimitExceeded || !strings.Contains(perr.Message, "server.max_batch (100") {
		t.Fatalf("error %+v, want -32005 naming server.max_batch", perr)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("refusing 2.6M elements allocated %d bytes: the elements were materialised", n)
	}
	if got, perr := jsonrpc.ParseBodyLimit(tinyBatch(100), 100); perr != nil || len(got.Elements) != 100 {
		t.Fatalf("a batch at the limit: %d elements, %v", len(got.Elements), perr)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A batch over server.max_batch is refused as its elements arrive: a 5 MB
// body of 2.6 million elements, under server.max_body_bytes, is refused
// after its first KiBs and the rest discarded, not held whole (13.6 MB
// allocated each, so four at once passed 50 MB of RSS on a loaded
// machine). The rest is still read: a connection closed while the client
// still sends resets, and can lose the answer.
func TestLimits_BatchRefusedBeforeItsBodyIsRead(t *testing.T) {
	cfg := engine.Default()
	cfg.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	e, err := engine.New(cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := tinyBatch(2_600_000)
	for _, known := range []bool{true, false} {
		in := &countingReader{r: bytes.NewReader(body)}
		r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/", io.NopCloser(in))
		r.Header.Set("Content-Type", "application/json")
		r.ContentLength = -1
		if known {
			r.ContentLength = int64(len(body))
		}
		w := httptest.NewRecorder()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		e.RPCHandler().ServeHTTP(w, r)
		runtime.ReadMemStats(&after)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"code":-32005`) || !strings.Contains(w.Body.String(), "server.max_batch (1000") {
			t.Fatalf("Content-Length known %v: HTTP %d %.200s, want -32005 naming server.max_batch", known, w.Code, w.Body.String())
		}
		if in.n != len(body) {
			t.Errorf("Content-Length known %v: %d bytes of the %d-byte body read: the rest would reset the connection, and the answer with it", known, in.n, len(body))
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("Content-Length known %v: the refusal allocated %d bytes, want under 1 MiB", known, n)
		}
	}
}

func TestLimits_MaxInflightAnswers503(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.MaxInflight = 2 }, sim.Config{Latency: fixed(0)})
	h.sims[0].SetMode(sim.ModeHang)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); h.call(i, "eth_getBalance", addr, "latest") }()
	}
	testutil.WaitUntil(t, 5*time.Second, "two requests hanging upstream", func() bool { return h.sims[0].Counters().Hanging == 2 })
	r := h.call(3, "eth_chainId")
	if e := r.rpcError(); r.status != http.StatusServiceUnavailable || e == nil || e["code"].(float64) != jsonrpc.CodeLimitExceeded ||
		!strings.Contains(e["message"].(string), "server.max_inflight") {
		t.Fatalf("HTTP %d %s; want 503 with -32005 naming server.max_inflight", r.status, r.body)
	}
	h.sims[0].SetMode(sim.ModeNormal)
	h.sims[0].Close() // releases the hung requests
	wg.Wait()
}

// Past server.max_conns a connection is told so with a 503 at once, and
// served again once a slot frees. The held connections are idle only a
// moment (the test clock stands still), so neither makes room.
func TestLimits_MaxConnsAnswers503PastTheCap(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, func(c *engine.Config) { c.Server.MaxConns = 2 }, sim.Config{Latency: fixed(0)})
	rpcAddr := strings.TrimPrefix(h.rpc, "http://")
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", rpcAddr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// A request on each held connection proves both were accepted.
	for _, c := range held {
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	r := h.call(1, "eth_chainId")
	if e := r.rpcError(); r.status != http.StatusServiceUnavailable || e == nil || e["code"].(float64) != jsonrpc.CodeLimitExceeded ||
		!strings.Contains(e["message"].(string), "server.max_conns (2)") {
		t.Fatalf("HTTP %d %s; want 503 with -32005 naming server.max_conns", r.status, r.body)
	}
	// One that says nothing within the refusal's read time still finds
	// the 503 waiting, not a bare close.
	quiet, err := net.Dial("tcp", rpcAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	quiet.SetReadDeadline(time.Now().Add(5 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(quiet), nil); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a quiet connection past the cap: %v %v, want the 503", resp, err)
	}
	held[0].Close()
	testutil.WaitUntil(t, 5*time.Second, "a request served once a slot frees", func() bool {
		return h.call(2, "eth_chainId").status == http.StatusOK
	})
	held[1].Close()
}

// holdIdle opens n keep-alive connections to h's RPC port, a request on
// each, and returns them (closed with the test) once the port counts them
// idle: net/http notes a connection idle after its answer is written,
// which the client may have read first.
func holdIdle(t *testing.T, h *harness, n int) ([]net.Conn, []*bufio.Reader) {
	t.Helper()
	var held []net.Conn
	var readers []*bufio.Reader
	for range n {
		c, err := net.Dial("tcp", strings.TrimPrefix(h.rpc, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		r := bufio.NewReader(c)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		held, readers = append(held, c), append(readers, r)
	}
	testutil.WaitUntil(t, 5*time.Second, "the held connections noted idle", func() bool { return h.eng.IdleConns() == n })
	return held, readers
}

// At server.max_conns a keep-alive connection idle for 5 s makes room for
// a new one: one client holding the port's every connection idle (one
// request each every two minutes) kept every new connection out, curl
// refused 10 of 10. One idle a moment does not: its client may be writing.
func TestLimits_AtMaxConnsAConnectionIdleAWhileMakesRoom(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, func(c *engine.Config) { c.Server.MaxConns = 2 }, sim.Config{Latency: fixed(0)})
	held, _ := holdIdle(t, h, 2)
	// A new connection each time, as curl makes.
	curl := func() (int, string) {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Post(h.rpc, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`))
		if err != nil {
			t.Fatalf("a new connection beside 2 idle ones at server.max_conns 2: %v", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	clock.Advance(engine.ReclaimIdleAfter - time.Millisecond)
	if status, body := curl(); status != http.StatusServiceUnavailable {
		t.Fatalf("beside 2 connections idle just under %v: HTTP %d %s; want 503, neither taken", engine.ReclaimIdleAfter, status, body)
	}
	clock.Advance(time.Millisecond)
	if status, body := curl(); status != http.StatusOK || !strings.Contains(body, `"result"`) {
		t.Fatalf("beside 2 connections idle %v: HTTP %d %s; want one of them to make room", engine.ReclaimIdleAfter, status, body)
	}
	// An idle connection made room: it was closed, and reads EOF.
	closed := make(chan error, len(held))
	for _, c := range held {
		go func() {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := c.Read(make([]byte, 1))
			closed <- err
		}()
	}
	for range held {
		if err := <-closed; err == io.EOF {
			return
		}
	}
	t.Fatal("no idle connection was closed to make room, yet a new one was served at server.max_conns 2")
}

// A connection whose next request has begun to arrive is not taken to make
// room, however long it was idle: net/http counts it idle until the whole
// header is in, and one whose header was arriving was closed, its request
// lost (review, stop 55).
func TestLimits_AConnectionWhoseRequestIsArrivingIsNotTakenToMakeRoom(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, func(c *engine.Config) { c.Server.MaxConns = 2 }, sim.Config{Latency: fixed(0)})
	held, readers := holdIdle(t, h, 2)
	// The first held connection (idle longest) starts its next request.
	const body = `{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}`
	fmt.Fprintf(held[0], "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	testutil.WaitUntil(t, 5*time.Second, "its first bytes read", func() bool { return h.eng.IdleConnsArriving() == 1 })
	clock.Advance(engine.ReclaimIdleAfter)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Post(h.rpc, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a new connection: HTTP %d; want the quiet held connection to make room", resp.StatusCode)
	}
	fmt.Fprintf(held[0], "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	held[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := http.ReadResponse(readers[0], nil)
	if err != nil {
		t.Fatalf("the request arriving on the held connection: %v; want it answered", err)
	}
	answer, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if got.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"id":7`) {
		t.Fatalf("the request arriving on the held connection: HTTP %d %s", got.StatusCode, answer)
	}
}

// A client that stalls mid-body is cut at server.read_timeout with a 408
// and its connection closed, whatever length it announced (under 256 KiB
// net/http reads on after the answer to discard the rest: that read must
// not wait for ever); one that trickles its header at the same bound.
func TestLimits_SlowBodyCutAtReadTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) { c.Server.ReadTimeout = 300 * time.Millisecond }, sim.Config{Latency: fixed(0)})
	rpcAddr := strings.TrimPrefix(h.rpc, "http://")
	for _, length := range []int{5242880, 262144, 100} {
		c, err := net.Dial("tcp", rpcAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		began := time.Now()
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", length)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("Content-Length %d: %v", length, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if took := time.Since(began); resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "server.read_timeout") || took > 300*time.Millisecond+time.Second {
			t.Fatalf("Content-Length %d: HTTP %d after %s: %s; want 408 naming server.read_timeout within read_timeout + 1 s", length, resp.StatusCode, took, body)
		}
		if _, err := io.ReadAll(br); err != nil {
			t.Fatalf("Content-Length %d: the connection stayed open after the 408: %v", length, err)
		}
		if took := time.Since(began); took > 300*time.Millisecond+time.Second {
			t.Fatalf("Content-Length %d: the connection closed only after %s", length, took)
		}
	}

	hc, err := net.Dial("tcp", rpcAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	fmt.Fprintf(hc, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	hc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(hc); err != nil {
		t.Fatalf("a trickled header was not cut: %v", err)
	}
}

// A request served for longer than server.read_timeout is not cut by it:
// the deadline is on reading the body only.
func TestLimits_ReadTimeoutDoesNotCutLongRequests(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.ReadTimeout = 100 * time.Millisecond }, sim.Config{Latency: fixed(400 * time.Millisecond)})
	mustOK(t, h.call(1, "eth_chainId"))
}

// Shutdown does not wait for clients still sending their request: it cuts
// them, answering 503.
func TestLimits_TricklingClientsDoNotDelayShutdown(t *testing.T) {
	cfg := baseConfig()
	u := sim.New(sim.Config{Latency: fixed(0)})
	if err := u.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	cfg.Endpoints = []engine.EndpointConfig{{Name: "a", URL: u.URL()}}
	eng, err := engine.New(cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	var bodies, headers []*bufio.Reader
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 20 {
		c, err := net.Dial("tcp", eng.RPCAddr())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		r := bufio.NewReader(c)
		if i%2 == 1 {
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
			headers = append(headers, r)
			continue
		}
		// "100 Continue" comes when the handler starts reading the body.
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
		if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != http.StatusContinue {
			t.Fatalf("no 100 Continue: %v", err)
		}
		fmt.Fprintf(c, "1\r\n[\r\n")
		bodies = append(bodies, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	began := time.Now()
	if err := eng.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if took := time.Since(began); took > time.Second {
		t.Fatalf("shutdown took %s with trickling clients, want under 1 s", took)
	}
	for _, r := range bodies {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("a trickling body got no answer: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "shutting down") {
			t.Fatalf("HTTP %d %s, want 503 saying rpcdash is shutting down", resp.StatusCode, body)
		}
	}
	for _, r := range headers {
		// Closed with the header unread, the connection may be reset.
		if b, err := io.ReadAll(r); err != nil && !errors.Is(err, syscall.ECONNRESET) || len(b) != 0 {
			t.Fatalf("a trickling header was answered %q (%v), want its connection closed", b, err)
		}
	}
}

// The per-answer write deadline does not outlive its answer: the next
// request on the same keep-alive connection, after the deadline would have
// passed, is answered.
func TestLimits_WriteDeadlineResetBetweenRequests(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.WriteTimeout = 100 * time.Millisecond }, sim.Config{Latency: fixed(0)})
	c, err := net.Dial("tcp", strings.TrimPrefix(h.rpc, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for i := range 2 {
		if i > 0 {
			time.Sleep(300 * time.Millisecond) // past the first answer's write deadline
		}
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(chainID), chainID)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("request %d on the kept-alive connection: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), `"result"`) {
			t.Fatalf("request %d: %s", i, body)
		}
	}
}

// geth takes batches of up to 1000 calls (its BatchRequestLimit) and viem's
// batching HTTP transport sends up to 1000 (batchSize): with the default
// server.max_batch such a batch is answered, as it would be directly.
func TestLimits_DefaultBatchTakesWhatGethTakes(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	const n = 1000
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"eth_chainId"}`, i)
	}
	b.WriteByte(']')
	r := h.post(b.String())
	var answers []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(r.body, &answers); err != nil || len(answers) != n {
		t.Fatalf("a batch of %d calls: HTTP %d, %d answers (%v): %.200s", n, r.status, len(answers), err, r.body)
	}
	for i, a := range answers {
		if a.ID != i || a.Result == nil {
			t.Fatalf("answer %d: id %d, result %s", i, a.ID, a.Result)
		}
	}
}

// A batch's plain reads go upstream as one batch, and when that fails
// (here the endpoint drops its connection) the calls run alone, at most
// batchFanout (100) at once, not all 250 at once. With every call hanging
// until the request's deadline, the endpoint hears the upstream batch of
// 250 and then 100 calls on their own, and the client gets an answer for
// each of the 250. (It hung the upstream batch past its deadline here
// until the last endpoint's batch was no longer cut there.)
func TestLimits_BatchCallsInFlightAreBounded(t *testing.T) {
	t.Parallel()
	sims := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	var batches, singles atomic.Int64
	var hang atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.HasPrefix(body, []byte("[")):
			batches.Add(1)
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
		case hang.Load():
			singles.Add(1)
			holdFor(r, 30*time.Second) // until rpcdash lets go
		default:
			relay(w, sims.sims[0].URL(), body)
		}
	}))
	t.Cleanup(front.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Server.RequestTimeout = 5 * time.Second
		c.Endpoints = []engine.EndpointConfig{{Name: "s0", URL: front.URL}}
	})
	h.warm(20) // single calls, relayed: a learnt deadline, not a cold one
	hang.Store(true)
	const n = 250
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["%s","latest"]}`, i, addr)
	}
	b.WriteByte(']')
	r := h.post(b.String())
	var answers []json.RawMessage
	if err := json.Unmarshal(r.body, &answers); err != nil || len(answers) != n {
		t.Fatalf("HTTP %d, %d answers (%v): %.200s", r.status, len(answers), err, r.body)
	}
	// A read batch whose connection dropped unanswered may be sent again
	// on another (e.post, as any read): one or more upstream batches.
	if b, s := batches.Load(), singles.Load(); b < 1 || s != 100 {
		t.Fatalf("the endpoint heard %d upstream batches and then %d calls alone of a batch of %d; want the upstream batch and then 100 calls alone (batchFanout in flight at once)", b, s, n)
	}
}
