package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// harness is an engine on real loopback ports in front of real sim
// upstreams, driven by a real HTTP client.
type harness struct {
	t      testing.TB
	sims   []*sim.Upstream
	eng    *engine.Engine
	rpc    string
	admin  string
	client *http.Client
	logs   *testutil.SyncBuffer
}

// baseConfig is a test config: the defaults, with hedging off unless a
// test turns it on, short cooldowns, endpoints named after their sims.
func baseConfig() engine.Config {
	c := engine.Default()
	c.Server.Listen = "127.0.0.1:0"
	c.Server.Admin = "127.0.0.1:0"
	c.Server.RequestTimeout = 5 * time.Second
	c.Hedge.Enabled = false
	c.Breaker.Cooldown = time.Second
	c.Probes.Interval = time.Hour
	return c
}

// newHarness starts sims (named s0, s1, ... unless named) and an engine.
func newHarness(t testing.TB, mut func(*engine.Config), sims ...sim.Config) *harness {
	t.Helper()
	return startHarness(t, nil, mut, sims...)
}

// newClockedHarness is newHarness with the engine and every sim on clock:
// heads (and the time they are seen at) move only when the test moves it.
func newClockedHarness(t testing.TB, clock *testutil.Clock, mut func(*engine.Config), sims ...sim.Config) *harness {
	t.Helper()
	return startHarness(t, clock, mut, sims...)
}

func startHarness(t testing.TB, clock *testutil.Clock, mut func(*engine.Config), sims ...sim.Config) *harness {
	t.Helper()
	return startHarnessOpts(t, clock, engine.Options{}, mut, sims...)
}

// startHarnessOpts is startHarness with the engine's Options (its Logger
// and Now are the harness's).
func startHarnessOpts(t testing.TB, clock *testutil.Clock, opts engine.Options, mut func(*engine.Config), sims ...sim.Config) *harness {
	t.Helper()
	h := &harness{t: t, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}, logs: &testutil.SyncBuffer{}}
	cfg := baseConfig()
	for i, sc := range sims {
		if sc.Name == "" {
			sc.Name = "s" + strconv.Itoa(i)
		}
		if sc.Seed == 0 {
			sc.Seed = int64(i + 1)
		}
		if clock != nil {
			sc.Clock = clock.Now
		}
		u := sim.New(sc)
		if err := u.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		h.sims = append(h.sims, u)
		t.Cleanup(func() { u.Close() })
		cfg.Endpoints = append(cfg.Endpoints, engine.EndpointConfig{Name: sc.Name, URL: u.URL(),
			Provider: "p" + strconv.Itoa(i), Region: "r" + strconv.Itoa(i)})
	}
	if mut != nil {
		mut(&cfg)
	}
	opts.Logger = slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if clock != nil {
		opts.Now = clock.Now
	}
	eng, err := engine.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	h.eng = eng
	h.rpc = "http://" + eng.RPCAddr()
	h.admin = "http://" + eng.AdminAddr()
	t.Cleanup(func() {
		h.client.CloseIdleConnections()
		if err := eng.Close(); err != nil {
			t.Errorf("engine close: %v", err)
		}
	})
	return h
}

func fixed(d time.Duration) sim.Latency { return sim.Latency{Median: d} }

// directResult sends one JSON-RPC request straight to u, as a client that
// bypasses rpcdash does, and decodes its result into result.
func directResult(t *testing.T, u *sim.Upstream, method string, params, result any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(u.URL(), "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Result json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s straight to %s: %v", method, u.Name(), err)
	}
	if err := json.Unmarshal(out.Result, result); err != nil {
		t.Fatalf("%s straight to %s: result %s: %v", method, u.Name(), out.Result, err)
	}
}

type reply struct {
	status   int
	body     []byte
	endpoint string
	attempts int
	hedged   bool
	took     time.Duration
	id       string // X-Rpcdash-Request-Id
	retry    string // Retry-After
}

func (r reply) rpcError() map[string]any {
	var m struct {
		Error map[string]any `json:"error"`
	}
	json.Unmarshal(r.body, &m)
	return m.Error
}

func (h *harness) post(body string) reply {
	h.t.Helper()
	start := time.Now()
	resp, err := h.client.Post(h.rpc, "application/json", strings.NewReader(body))
	if err != nil {
		h.t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("read: %v", err)
	}
	n, _ := strconv.Atoi(resp.Header.Get(engine.HeaderAttempts))
	return reply{status: resp.StatusCode, body: b, endpoint: resp.Header.Get(engine.HeaderEndpoint),
		attempts: n, hedged: resp.Header.Get(engine.HeaderHedged) == "1", took: time.Since(start),
		id: resp.Header.Get(engine.HeaderRequestID), retry: resp.Header.Get("Retry-After")}
}

func (h *harness) call(id int, method string, params ...any) reply {
	h.t.Helper()
	if params == nil {
		params = []any{}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return h.post(string(b))
}

// mustOK fails unless the reply is a JSON-RPC result.
func mustOK(t testing.TB, r reply) {
	t.Helper()
	if r.status != 200 || !bytes.Contains(r.body, []byte(`"result"`)) {
		t.Fatalf("want a result, got HTTP %d %s", r.status, r.body)
	}
}

func (h *harness) adminDo(method, path, body string) (int, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.admin+path, strings.NewReader(body))
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (h *harness) status() engine.Snapshot {
	h.t.Helper()
	code, b := h.adminDo("GET", "/v1/status", "")
	if code != 200 {
		h.t.Fatalf("status: HTTP %d %s", code, b)
	}
	var s engine.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) endpoint(name string) engine.EndpointSnapshot {
	h.t.Helper()
	for _, ep := range h.status().Endpoints {
		if ep.Name == name {
			return ep
		}
	}
	h.t.Fatalf("no endpoint %s", name)
	return engine.EndpointSnapshot{}
}

func (h *harness) events() []engine.Event {
	h.t.Helper()
	code, b := h.adminDo("GET", "/v1/events", "")
	if code != 200 {
		h.t.Fatalf("events: HTTP %d", code)
	}
	var out struct{ Events []engine.Event }
	if err := json.Unmarshal(b, &out); err != nil {
		h.t.Fatal(err)
	}
	return out.Events
}

// transitions lists an endpoint's breaker transitions as "from>to".
func (h *harness) transitions(name string) []string {
	var out []string
	for _, ev := range h.events() {
		if ev.Type == engine.EventBreaker && ev.Endpoint == name {
			out = append(out, ev.From+">"+ev.To)
		}
	}
	return out
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var addr = fmt.Sprintf("0x%040x", 0xaa)

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func (h *harness) mustRequest(method, path, body string) *http.Request {
	h.t.Helper()
	req, err := http.NewRequest(method, h.admin+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func (h *harness) mustDo(req *http.Request) {
	h.t.Helper()
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		h.t.Fatalf("%s %s: HTTP %d %s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
}

func (h *harness) upstreamCount(method string) int64 {
	var n int64
	for _, u := range h.sims {
		n += u.MethodCount(method)
	}
	return n
}
