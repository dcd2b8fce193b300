package engine_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/sim"
)

func setMode(t *testing.T, u *sim.Upstream, c sim.ControlRequest) {
	t.Helper()
	if err := u.Apply(c); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// An answer over server.max_response_bytes is cut with a clear error and
// charged to its endpoint; reads go on to the healthy endpoint.
func TestUpstreamBound_HugeAnswerCutAndCharged(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Server.MaxResponseBytes = 1 << 20
		c.Breaker.Failures = 100
	}, sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)})
	setMode(t, h.sims[0], sim.ControlRequest{Mode: ptr(string(sim.ModeHugeAnswer)), HugeBytes: ptr(int64(8 << 20))})
	h.adminDo("POST", "/v1/endpoints/s1/drain", "")
	r := h.call(1, "eth_getLogs", map[string]any{})
	e := r.rpcError()
	if e == nil || !strings.Contains(e["message"].(string), "server.max_response_bytes (1048576 bytes)") || len(r.body) > 2048 {
		t.Fatalf("HTTP %d %.300s: want a short error naming server.max_response_bytes", r.status, r.body)
	}
	ep := h.endpoint("s0")
	if ep.Rates.Failures == 0 || !strings.Contains(ep.LastError, "max_response_bytes") {
		t.Fatalf("s0 not charged: failures %d, last error %q", ep.Rates.Failures, ep.LastError)
	}
	h.adminDo("POST", "/v1/endpoints/s1/undrain", "")
	for i := range 10 {
		r := h.call(i, "eth_getLogs", map[string]any{})
		mustOK(t, r)
		if r.endpoint != "s1" {
			t.Fatalf("answered by %s", r.endpoint)
		}
	}
}

// An answer whose Content-Length is over the bound is refused without
// being read: this upstream never sends the body it announces.
func TestUpstreamBound_AnnouncedLengthRefusedUnread(t *testing.T) {
	release := make(chan struct{})
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "104857600")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer big.Close()
	defer close(release)
	h := newHarness(t, func(c *engine.Config) {
		c.Server.MaxResponseBytes = 1 << 20
		c.Endpoints = []engine.EndpointConfig{{Name: "big", URL: big.URL}}
	})
	r := h.call(1, "eth_getLogs", map[string]any{})
	if e := r.rpcError(); e == nil || !strings.Contains(e["message"].(string), "server.max_response_bytes") {
		t.Fatalf("%s: want the answer refused on its Content-Length", r.body)
	}
}

// A batch's answers together stay within server.max_response_bytes: the
// elements past it are answered -32003, every element is answered, in order.
func TestUpstreamBound_BatchAnswersBoundTogether(t *testing.T) {
	const limit = 1 << 20
	h := newHarness(t, func(c *engine.Config) { c.Server.MaxResponseBytes = limit }, sim.Config{Latency: fixed(0)})
	setMode(t, h.sims[0], sim.ControlRequest{Mode: ptr(string(sim.ModeHugeAnswer)), HugeBytes: ptr(int64(300 << 10))})
	var batch []string
	for i := range 8 {
		batch = append(batch, `{"jsonrpc":"2.0","id":`+string(rune('0'+i))+`,"method":"eth_getLogs","params":[{}]}`)
	}
	r := h.post("[" + strings.Join(batch, ",") + "]")
	var out []struct {
		ID     int
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(r.body, &out); err != nil || len(out) != 8 {
		t.Fatalf("%d elements (%v) in %d bytes", len(out), err, len(r.body))
	}
	cut := 0
	for i, o := range out {
		if o.ID != i {
			t.Fatalf("element %d has id %d", i, o.ID)
		}
		if o.Error != nil {
			if o.Error.Code != jsonrpc.CodeResponseTooLarge || !strings.Contains(o.Error.Message, "server.max_response_bytes") {
				t.Fatalf("element %d: %+v", i, o.Error)
			}
			cut++
		}
	}
	if cut == 0 || len(r.body) > limit+8*512 {
		t.Fatalf("%d elements cut, answer of %d bytes for a bound of %d", cut, len(r.body), limit)
	}
	if ep := h.endpoint("s0"); ep.Rates.Failures != 0 {
		t.Fatalf("the batch's own bound was charged to s0 (%d failures)", ep.Rates.Failures)
	}
}

// A malformed status line, quoted by Go's HTTP client, reaches the client
// and the Snapshot cut short and without escape sequences.
func TestUpstreamBound_MalformedStatusLineSanitised(t *testing.T) {
	for _, junk := range []int{32 << 10, 1 << 20} {
		h := newHarness(t, func(c *engine.Config) { c.Breaker.Failures = 100 }, sim.Config{Latency: fixed(0)})
		setMode(t, h.sims[0], sim.ControlRequest{Mode: ptr(string(sim.ModeMalformedStatus)), JunkBytes: ptr(junk)})
		r := h.call(1, "eth_chainId")
		e := r.rpcError()
		if e == nil || len(r.body) > 1024 || strings.ContainsAny(string(r.body), "\x1b\x07") || strings.Contains(string(r.body), `\u001b`) {
			t.Fatalf("junk %d: client error of %d bytes: %.400q", junk, len(r.body), r.body)
		}
		last := h.endpoint("s0").LastError
		if last == "" || len(last) > 1024 || strings.ContainsAny(last, "\x1b\x07\xff") {
			t.Fatalf("junk %d: last_error of %d bytes: %.400q", junk, len(last), last)
		}
		if logs := h.logs.String(); strings.Contains(logs, "JUNKJUNK") && strings.Count(logs, "JUNK") > 200 {
			t.Fatalf("junk %d: the logs carry the junk unbounded", junk)
		}
	}
}

// A trickling answer is cut by the attempt's deadline and the read fails
// over to the healthy endpoint; the client never waits for the trickle.
func TestUpstreamBound_TrickleCutByAttemptDeadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) { c.Breaker.AttemptTimeoutMin = 200 * time.Millisecond },
		sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)})
	setMode(t, h.sims[0], sim.ControlRequest{Mode: ptr(string(sim.ModeTrickle)), TrickleInterval: ptr("100ms")})
	for i := range 4 {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		// Nothing measured yet, the attempt deadline is a third of the
		// request's (5 s): the answer comes well within the latter.
		if r.endpoint != "s1" || r.took > 4*time.Second {
			t.Fatalf("answered by %s after %s", r.endpoint, r.took)
		}
	}
}

// What the probes learn from an endpoint's certificate or DNS (TLS issuer,
// AS names, exclusion reasons that quote an answer) is upstream text too.
func TestUpstreamBound_ProbeFindingsSanitised(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	junk := "\x1b]0;owned\x07\xff" + strings.Repeat("J", 10_000)
	h.eng.SetIndependence(map[string]engine.IndependenceInfo{"s0": {TLSIssuer: junk, ASNs: []string{"AS1 " + junk}, Error: junk}},
		nil, []engine.Warning{{Endpoints: []string{"s0"}, Reason: "asn", Text: "s0 shares " + junk}})
	h.eng.Exclude("s0", engine.ExcludeWrongChain, "answered chain id "+junk)
	code, b := h.adminDo("GET", "/v1/status", "")
	if code != 200 || len(b) > 64<<10 || strings.Contains(string(b), `\u001b`) || strings.Contains(string(b), `\u0007`) || strings.Contains(string(b), strings.Repeat("J", 2000)) {
		t.Fatalf("status of %d bytes carries the junk: %.300s", len(b), b)
	}
	for _, ev := range h.events() {
		if len(ev.Message) > 2048 || strings.ContainsAny(ev.Message, "\x1b\x07") {
			t.Fatalf("event %.200q", ev.Message)
		}
	}
}

// Providers compress their answers when asked, and rpcdash asks (Go's
// transport sends Accept-Encoding: gzip and inflates the answer): a
// compressed answer is relayed as the answer it is. A compressed answer
// that inflates past server.max_response_bytes (a gzip bomb: 256 MiB from
// a quarter of a megabyte) is cut at the bound while it inflates, with the
// same clear error, never inflated whole.
func TestUpstreamBound_GzipAnswersAreReadAndBombsBounded(t *testing.T) {
	gzipped := func(w http.ResponseWriter, parts ...[]byte) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		for _, p := range parts {
			zw.Write(p)
		}
		zw.Close()
	}
	var asked atomic.Value
	zip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.Header.Get("Accept-Encoding"))
		var req struct{ ID json.RawMessage }
		json.NewDecoder(r.Body).Decode(&req)
		gzipped(w, []byte(`{"jsonrpc":"2.0","id":`), req.ID, []byte(`,"result":"0x2a"}`))
	}))
	t.Cleanup(zip.Close)
	// The bomb is compressed once, before any request: compressing 256 MiB
	// as it is asked took the server (under -race, beside two busy loops)
	// past the request's 5 s before it had sent the first mebibyte, and the
	// read timed out with the bomb still working on it. A gzip stream may
	// hold several members, inflated as one (Go's transport reads them so):
	// one MiB of zeros compressed once, sent 256 times between the head and
	// the tail of the answer, is the same 256 MiB from a quarter of a
	// megabyte.
	member := func(p []byte) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(p)
		zw.Close()
		return b.Bytes()
	}
	mib := member(bytes.Repeat([]byte("0"), 1<<20))
	payload := member([]byte(`{"jsonrpc":"2.0","id":1,"result":"0x`))
	for range 256 {
		payload = append(payload, mib...)
	}
	payload = append(payload, member([]byte(`"}`))...)
	bomb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(payload)
	}))
	t.Cleanup(bomb.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Server.MaxResponseBytes = 1 << 20
		c.Endpoints = []engine.EndpointConfig{
			{Name: "zip", URL: zip.URL, Provider: "pz", Region: "rz"},
			{Name: "bomb", URL: bomb.URL, Provider: "pb", Region: "rb"},
		}
	})
	h.adminDo("POST", "/v1/endpoints/bomb/drain", "")
	r := h.call(7, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if got := resultString(t, r); got != `"0x2a"` || r.endpoint != "zip" {
		t.Fatalf("compressed answer relayed as %s by %s", got, r.endpoint)
	}
	if a, _ := asked.Load().(string); !strings.Contains(a, "gzip") {
		t.Fatalf("Accept-Encoding %q: rpcdash does not ask providers to compress", a)
	}

	h.adminDo("POST", "/v1/endpoints/bomb/undrain", "")
	h.adminDo("POST", "/v1/endpoints/zip/drain", "")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r = h.call(8, "eth_getBalance", addr, "latest")
	runtime.ReadMemStats(&after)
	e := r.rpcError()
	if e == nil || !strings.Contains(e["message"].(string), "server.max_response_bytes (1048576 bytes)") {
		t.Fatalf("HTTP %d %.300s: want the bomb cut at server.max_response_bytes", r.status, r.body)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("allocated %d MiB for a 256 MiB bomb cut at 1 MiB", grew>>20)
	}
}
