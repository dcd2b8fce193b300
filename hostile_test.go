package main

// The hostile-input suite: the real rpcdash binary, attacked through its
// real ports the way issue 9 found it could be, with the process's peak
// memory (VmHWM in /proc/PID/status) and goroutine count (go_goroutines on
// /metrics) asserted to stay bounded. Upstreams are sims in the test's own
// process, so their memory is not counted against rpcdash.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// The JSON-RPC error codes rpcdash answers these attacks with (README):
// parse errors, and limits (EIP-1474's "limit exceeded").
const (
	codeParseError    = -32700
	codeLimitExceeded = -32005
)

type hostileEngine struct {
	t          *testing.T
	p          *testutil.Proc
	rpc, admin string
	baseRSS    int64 // kB, after warm-up
	baseG      int
}

// startHostile runs `rpcdash serve` with probes off, the [server] keys
// given, in front of the sims, and takes its baseline after a warm-up.
func startHostile(t *testing.T, serverKeys string, sims ...*sim.Upstream) *hostileEngine {
	t.Helper()
	cfg := "[server]\nlisten = \"127.0.0.1:0\"\nadmin = \"127.0.0.1:0\"\n" + serverKeys + "\n[probes]\nenabled = false\n"
	for _, u := range sims {
		cfg += fmt.Sprintf("[[endpoints]]\nname = %q\nurl = %q\nprovider = %q\n", u.Name(), u.URL(), u.Name())
	}
	p := startProc(t, "serve", "--config", writeConfig(t, cfg))
	m := p.Line(t, addrLine)
	e := &hostileEngine{t: t, p: p, rpc: m[1], admin: m[2]}
	// The warm-up includes a full batch: the baseline then holds the idle
	// upstream connections a batch leaves in the pool (two goroutines
	// each), which are the pool's, not an attack's.
	for range 3 {
		e.post(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`, nil)
	}
	e.post("["+strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},`, 99)+`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]`, nil)
	e.baseRSS = e.status("VmRSS")
	e.baseG = e.goroutines()
	return e
}

// status reads a kB field of /proc/PID/status.
func (e *hostileEngine) status(field string) int64 {
	e.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.p.Pid()))
	if err != nil {
		e.t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		e.t.Fatalf("no %s in /proc status", field)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

var goroutinesLine = regexp.MustCompile(`(?m)^go_goroutines (\d+)`)

func (e *hostileEngine) goroutines() int {
	e.t.Helper()
	m := goroutinesLine.FindStringSubmatch(get(e.t, "http://"+e.admin+"/metrics"))
	if m == nil {
		e.t.Fatal("no go_goroutines on /metrics")
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// watch samples the goroutine count until stop is called, which returns
// the highest seen.
func (e *hostileEngine) watch() (stop func() int) {
	done := make(chan struct{})
	peak := make(chan int, 1)
	go func() {
		hi := 0
		for {
			if resp, err := client.Get("http://" + e.admin + "/metrics"); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if m := goroutinesLine.FindSubmatch(b); m != nil {
					n, _ := strconv.Atoi(string(m[1]))
					hi = max(hi, n)
				}
			}
			select {
			case <-done:
				peak <- hi
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() int { close(done); return <-peak }
}

// settle waits for the goroutines to come back to the baseline (a few
// more are allowed: the scrape's own, idle upstream connections).
func (e *hostileEngine) settle(slack int) int {
	e.t.Helper()
	var n int
	if !testutil.Poll(10*time.Second, func() bool { n = e.goroutines(); return n <= e.baseG+slack }) {
		e.t.Fatalf("goroutines %d, not back to the baseline %d (+%d) after 10 s", n, e.baseG, slack)
	}
	return n
}

// figure logs and checks the peak RSS growth of an attack.
func (e *hostileEngine) figure(attack string, peakG, afterG int, maxGrowthMB int64) {
	e.t.Helper()
	hwm := e.status("VmHWM")
	growth := hwm - e.baseRSS
	e.t.Logf("figure: %-28s RSS base %6.1f MB, peak %6.1f MB, growth %6.1f MB; goroutines base %d, peak %d, after %d",
		attack, float64(e.baseRSS)/1024, float64(hwm)/1024, float64(growth)/1024, e.baseG, peakG, afterG)
	if growth > maxGrowthMB<<10 {
		e.t.Errorf("%s: peak RSS grew by %.1f MB, bound %d MB", attack, float64(growth)/1024, maxGrowthMB)
	}
}

type answer struct {
	status int
	body   []byte
	err    error
}

func (a answer) code() int {
	var m struct{ Error *struct{ Code int } }
	if json.Unmarshal(a.body, &m) != nil || m.Error == nil {
		return 0
	}
	return m.Error.Code
}

func (e *hostileEngine) post(body string, headers map[string]string) answer {
	return e.postTo("http://"+e.rpc, []byte(body), headers)
}

func (e *hostileEngine) postTo(url string, body []byte, headers map[string]string) answer {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: b, err: err}
}

func (e *hostileEngine) snapshot() engine.Snapshot {
	var s engine.Snapshot
	if err := json.Unmarshal([]byte(get(e.t, "http://"+e.admin+"/v1/status")), &s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

func hostileSim(t *testing.T, name string) *sim.Upstream {
	t.Helper()
	u := sim.New(sim.Config{Name: name, Seed: 1})
	if err := u.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return u
}

func setSimMode(t *testing.T, u *sim.Upstream, c sim.ControlRequest) {
	t.Helper()
	if err := u.Apply(c); err != nil {
		t.Fatal(err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// stopHostile ends the process with SIGTERM and checks it exits cleanly.
func (e *hostileEngine) stop() time.Duration {
	e.t.Helper()
	began := time.Now()
	e.p.Signal(e.t, syscall.SIGTERM)
	if code := e.p.Wait(e.t, 15*time.Second); code != 0 {
		e.t.Errorf("exit code %d; stderr:\n%s", code, e.p.Stderr())
	}
	return time.Since(began)
}

// A 5 MB batch of 2.6 million two-byte elements, alone and four at once:
// refused as its elements arrive, the rest discarded unheld (4 MB of RSS
// growth for four at once; it was 39-53 MB when each was held whole).
func TestHostile_HugeBatchRefusedWithinBoundedMemory(t *testing.T) {
	e := startHostile(t, "", hostileSim(t, "a"))
	body := append([]byte{'['}, bytes.Repeat([]byte("1,"), 2_600_000)...)
	body[len(body)-1] = ']'
	attack := func(n int) {
		stop := e.watch()
		var wg sync.WaitGroup
		answers := make([]answer, n)
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); answers[i] = e.postTo("http://"+e.rpc, body, nil) }()
		}
		wg.Wait()
		peak := stop()
		for _, a := range answers {
			if a.err != nil || a.status != 200 || a.code() != codeLimitExceeded {
				t.Fatalf("HTTP %d %.200s (%v): want -32005", a.status, a.body, a.err)
			}
		}
		e.figure(fmt.Sprintf("batch 2.6M elements x%d", n), peak, e.settle(4), 10)
	}
	attack(1)
	attack(4)
	e.stop()
}

// trickle opens n connections that send a request header and then, per
// silent, either nothing more under a 5 MB Content-Length or one chunk of
// a chunked body a second. It returns, per connection, how long it stayed
// open; done is closed when every one has been closed by the server.
func trickle(t *testing.T, addr string, n int) (lifetimes []time.Duration, wait func()) {
	t.Helper()
	lifetimes = make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		opened := time.Now()
		switch i % 3 {
		case 0:
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5242880\r\n\r\n")
		case 1:
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
		default: // a request's usual size, stalled after its first byte
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		}
		wg.Add(2)
		closed := make(chan struct{})
		go func() { // the trickle: bounded to 30 bytes
			defer wg.Done()
			for range 30 {
				select {
				case <-closed:
					return
				case <-time.After(time.Second):
				}
				if i%3 == 1 {
					if _, err := c.Write([]byte("1\r\n[\r\n")); err != nil {
						return
					}
				}
			}
		}()
		go func() { // the reader: until the server closes the connection
			defer wg.Done()
			defer close(closed)
			c.SetReadDeadline(time.Now().Add(40 * time.Second))
			io.Copy(io.Discard, c)
			lifetimes[i] = time.Since(opened)
			c.Close()
		}()
	}
	return lifetimes, wg.Wait
}

// 50 connections trickling a body, announcing 5 MB and sending nothing, or
// announcing 100 bytes and stalling after the first:
// all closed within server.read_timeout + 1 s, no memory reserved for
// what never came, goroutines back to the baseline; and a shutdown during
// them takes under 1 s.
func TestHostile_SlowClientsCutOff(t *testing.T) {
	const readTimeout = 2 * time.Second
	e := startHostile(t, `read_timeout = "2s"`, hostileSim(t, "a"))
	stop := e.watch()
	lifetimes, wait := trickle(t, e.rpc, 50)
	wait()
	peak := stop()
	for i, d := range lifetimes {
		if d > readTimeout+time.Second {
			t.Errorf("connection %d stayed open %s, bound read_timeout + 1 s = %s", i, d, readTimeout+time.Second)
		}
	}
	e.figure("50 slow clients", peak, e.settle(4), 20)
	e.stop()

	e = startHostile(t, `read_timeout = "30s"`, hostileSim(t, "b"))
	_, wait = trickle(t, e.rpc, 50)
	time.Sleep(200 * time.Millisecond) // let the headers arrive; the bound below holds either way
	if took := e.stop(); took > time.Second {
		t.Errorf("shutdown during 50 slow clients took %s, want under 1 s", took)
	} else {
		t.Logf("figure: shutdown during 50 slow clients took %s", took.Round(time.Millisecond))
	}
	wait()
}

// DNS rebinding and cross-site requests: refused, nothing injected, nothing
// sent upstream.
func TestHostile_RebindingAndCrossSiteRefused(t *testing.T) {
	up := hostileSim(t, "a")
	e := startHostile(t, "", up)
	send := `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x01"]}`
	if a := e.post(send, map[string]string{"Host": "rebind.example"}); a.status != 403 || !strings.Contains(string(a.body), "server.vhosts") {
		t.Errorf("rebound Host: HTTP %d %s", a.status, a.body)
	}
	fault := "http://" + e.admin + "/v1/endpoints/a/fault"
	if a := e.postTo(fault, []byte(`{"mode":"error"}`), map[string]string{"Origin": "https://evil.example"}); a.status != 403 || !strings.Contains(string(a.body), "server.cors_origins") {
		t.Errorf("foreign Origin: HTTP %d %s", a.status, a.body)
	}
	if a := e.postTo(fault, []byte(`{"mode":"error"}`), map[string]string{"Content-Type": "text/plain", "Origin": "null"}); a.status != 403 {
		t.Errorf("text/plain from a sandboxed page: HTTP %d %s", a.status, a.body)
	}
	if a := e.postTo(fault, []byte(`{"mode":"error"}`), map[string]string{"Host": "rebind.example"}); a.status != 403 {
		t.Errorf("admin with a rebound Host: HTTP %d %s", a.status, a.body)
	}
	if s := e.snapshot(); s.Endpoints[0].Fault != nil {
		t.Errorf("a fault was injected: %+v", s.Endpoints[0].Fault)
	}
	if n := len(up.Submissions()); n != 0 {
		t.Errorf("%d transactions reached the upstream", n)
	}
	e.stop()
}

// A 200 MB upstream answer: a clear error, the endpoint charged, memory
// bounded by server.max_response_bytes; the healthy endpoint answers on.
func TestHostile_HugeUpstreamAnswerBounded(t *testing.T) {
	huge, healthy := hostileSim(t, "huge"), hostileSim(t, "healthy")
	e := startHostile(t, "", huge, healthy)
	setSimMode(t, huge, sim.ControlRequest{Mode: ptrTo(string(sim.ModeHugeAnswer))}) // 200 MiB
	drain := e.postTo("http://"+e.admin+"/v1/endpoints/healthy/drain", nil, nil)
	if drain.status != 200 {
		t.Fatalf("drain: HTTP %d %s", drain.status, drain.body)
	}
	stop := e.watch()
	a := e.post(`{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{}]}`, nil)
	if a.err != nil || len(a.body) > 4096 || !strings.Contains(string(a.body), "server.max_response_bytes (33554432 bytes)") {
		t.Fatalf("HTTP %d, %d bytes %.300s (%v): want a short error naming server.max_response_bytes", a.status, len(a.body), a.body, a.err)
	}
	peak := stop()
	// A cut answer costs at most its bound and the last growth of its
	// buffer (1.5 x 32 MiB), plus the garbage collector's slack.
	e.figure("200 MB upstream answer", peak, e.settle(6), 3*32+16)
	ep := e.snapshot().Endpoints[0]
	if ep.Rates.Failures == 0 || !strings.Contains(ep.LastError, "max_response_bytes") {
		t.Errorf("huge not charged: failures %d, last error %q", ep.Rates.Failures, ep.LastError)
	}
	e.postTo("http://"+e.admin+"/v1/endpoints/healthy/undrain", nil, nil)
	for i := range 10 {
		if a := e.post(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}`, nil); a.code() != 0 || a.status != 200 {
			t.Fatalf("read %d with a healthy endpoint: HTTP %d %.200s", i, a.status, a.body)
		}
	}
	e.stop()
}

// Upstreams that trickle their answer or send a malformed status line:
// answers are clean and bounded, goroutines come back.
func TestHostile_TrickleAndMalformedUpstreams(t *testing.T) {
	slow, junk := hostileSim(t, "slow"), hostileSim(t, "junk")
	e := startHostile(t, `request_timeout = "3s"`, slow, junk)
	setSimMode(t, slow, sim.ControlRequest{Mode: ptrTo(string(sim.ModeTrickle))})
	setSimMode(t, junk, sim.ControlRequest{Mode: ptrTo(string(sim.ModeMalformedStatus))}) // 1 MiB of junk
	stop := e.watch()
	var wg sync.WaitGroup
	answers := make([]answer, 20)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = e.post(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}`, nil)
		}()
	}
	wg.Wait()
	peak := stop()
	for _, a := range answers {
		if a.err != nil || a.status != 200 || a.code() == 0 || len(a.body) > 2048 || strings.ContainsAny(string(a.body), "\x1b\xff") {
			t.Fatalf("HTTP %d, %d bytes %.300q (%v): want a short, clean JSON-RPC error", a.status, len(a.body), a.body, a.err)
		}
	}
	for _, ep := range e.snapshot().Endpoints {
		if len(ep.LastError) > 1024 || strings.ContainsAny(ep.LastError, "\x1b\xff") {
			t.Errorf("%s last_error of %d bytes: %.200q", ep.Name, len(ep.LastError), ep.LastError)
		}
	}
	e.figure("trickling + junk upstreams", peak, e.settle(8), 30)
	e.stop()
}

// The codec's edge cases through the port: each gets a JSON-RPC answer.
func TestHostile_CodecEdgeCases(t *testing.T) {
	e := startHostile(t, "", hostileSim(t, "a"))
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	deepParams := `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `]}`
	hugeID := `{"jsonrpc":"2.0","id":` + strings.Repeat("9", 1<<20) + `,"method":"eth_chainId"}`
	cases := []struct {
		name, body string
		code       int // JSON-RPC error code wanted, 0 = any answer
	}{
		{"deep nesting", deep, codeParseError},
		{"deep params", deepParams, 0},
		{"huge id", hugeID, 0},
		{"invalid UTF-8 in the method", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_\xff\xfe\"}", 0},
		{"invalid UTF-8 in an id", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"eth_chainId\"}", 0},
		{"duplicate keys", `{"jsonrpc":"2.0","id":1,"id":2,"method":"nope","method":"eth_chainId"}`, 0},
		{"a batch of duplicates", `[` + strings.Repeat(`{"jsonrpc":"2.0","id":1,"id":1,"method":"eth_chainId"},`, 9) + `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]`, 0},
		{"a batch of invalid duplicates", `[` + strings.Repeat(`{"jsonrpc":"2.0","id":1,"id":{},"method":1,"method":"x"},`, 99) + `{}]`, 0},
		{"an escaped key", `{"jsonrpc":"2.0","\u0069d":3,"method":"eth_chainId"}`, 0},
	}
	stop := e.watch()
	for _, c := range cases {
		a := e.post(c.body, nil)
		if a.err != nil || a.status != 200 || !json.Valid(a.body) {
			t.Errorf("%s: HTTP %d %.200q (%v)", c.name, a.status, a.body, a.err)
			continue
		}
		if c.code != 0 && a.code() != c.code {
			t.Errorf("%s: %.200s, want error %d", c.name, a.body, c.code)
		}
	}
	if a := e.post(`{"jsonrpc":"2.0","id":1,"id":2,"method":"eth_chainId"}`, nil); !strings.Contains(string(a.body), `"id":2`) {
		t.Errorf("duplicate id: answered %s, want the last id, as encoding/json and geth read it", a.body)
	}
	peak := stop()
	e.figure("codec edge cases", peak, e.settle(4), 50)
	e.stop()
}
