package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// trace fetches GET /v1/requests/{id}, failing unless it is there.
func (h *harness) trace(id string) engine.RequestTrace {
	h.t.Helper()
	code, b := h.adminDo("GET", "/v1/requests/"+id, "")
	if code != 200 {
		h.t.Fatalf("GET /v1/requests/%s: HTTP %d %s", id, code, b)
	}
	var tr engine.RequestTrace
	if err := json.Unmarshal(b, &tr); err != nil {
		h.t.Fatal(err)
	}
	return tr
}

// traces fetches GET /v1/requests?query.
func (h *harness) traces(query string) engine.RequestTraces {
	h.t.Helper()
	code, b := h.adminDo("GET", "/v1/requests?"+query, "")
	if code != 200 {
		h.t.Fatalf("GET /v1/requests?%s: HTTP %d %s", query, code, b)
	}
	var out engine.RequestTraces
	if err := json.Unmarshal(b, &out); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// settledTrace waits until every attempt of the trace has ended (a
// cancelled loser is released after the request is answered).
func (h *harness) settledTrace(id string) engine.RequestTrace {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tr := h.trace(id)
		done := true
		for _, a := range tr.Attempts {
			done = done && a.EndMS != nil
		}
		if done || time.Now().After(deadline) {
			return tr
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ids(rs engine.RequestTraces) []string {
	var out []string
	for _, r := range rs.Requests {
		out = append(out, r.ID)
	}
	return out
}

func TestTrace_HedgeWinsOverCancelledSlowPrimary(t *testing.T) {
	const delay = 50 * time.Millisecond
	h := newHarness(t, hedgeOn("50ms"),
		sim.Config{Latency: fixed(400 * time.Millisecond)},
		sim.Config{Latency: fixed(20 * time.Millisecond)})
	r := h.call(1, "eth_getBalance", addr, "latest") // cold: the first endpoint is primary
	mustOK(t, r)
	if r.id == "" || !r.hedged || r.endpoint != "s1" {
		t.Fatalf("id=%q hedged=%v endpoint=%s", r.id, r.hedged, r.endpoint)
	}
	tr := h.settledTrace(r.id)
	b, _ := json.MarshalIndent(tr, "", "  ")
	t.Logf("client %s, trace:\n%s", r.took, b)
	if tr.ID != r.id || tr.Method != "eth_getBalance" || tr.Class != "read" || tr.Outcome != "answered" || !tr.Hedged || tr.Endpoint != "s1" {
		t.Fatalf("request: %+v", tr)
	}
	if len(tr.Attempts) != 2 {
		t.Fatalf("attempts: %+v", tr.Attempts)
	}
	p, hg := tr.Attempts[0], tr.Attempts[1]
	if p.Endpoint != "s0" || p.Role != "primary" || p.Won || p.Outcome != "cancelled" || p.CancelReason != "another_won" ||
		p.StartMS > 20 || p.CancelMS == nil || p.ReleaseMS == nil || p.EndMS == nil {
		t.Fatalf("primary: %+v", p)
	}
	// Cancelled when the hedge's answer came in; released soon after.
	if *p.ReleaseMS < 0 || *p.ReleaseMS > 200 || *p.CancelMS < hg.StartMS {
		t.Fatalf("primary cancel at %v ms, release %v ms (hedge started at %v ms)", *p.CancelMS, *p.ReleaseMS, hg.StartMS)
	}
	if hg.Endpoint != "s1" || hg.Role != "hedge" || !hg.Won || hg.Outcome != "answer" || hg.EndMS == nil || hg.HTTPStatus != 200 || hg.CancelReason != "" {
		t.Fatalf("hedge: %+v", hg)
	}
	// About one delay after the primary (a loaded machine may be late).
	if got := time.Duration(hg.StartMS * float64(time.Millisecond)); got < delay-time.Millisecond || got > delay+150*time.Millisecond {
		t.Fatalf("hedge started at %s, want about %s", got, delay)
	}
	if *hg.EndMS-hg.StartMS < 19 {
		t.Fatalf("hedge took %v ms, the sim answers in 20", *hg.EndMS-hg.StartMS)
	}
	took := time.Duration(tr.LatencyMS * float64(time.Millisecond))
	if took > r.took || r.took-took > 100*time.Millisecond || took < time.Duration(*hg.EndMS*float64(time.Millisecond)) {
		t.Fatalf("trace latency %s, client measured %s, hedge ended at %v ms", took, r.took, *hg.EndMS)
	}
}

func TestTrace_WriteShowsOneAttempt(t *testing.T) {
	h := newHarness(t, hedgeOn("0s"), sim.Config{Latency: fixed(30 * time.Millisecond)}, sim.Config{Latency: fixed(30 * time.Millisecond)})
	r := h.call(1, "eth_sendRawTransaction", "0x02f8")
	if r.id == "" {
		t.Fatalf("no %s header", engine.HeaderRequestID)
	}
	tr := h.settledTrace(r.id)
	if tr.Class != "write" || len(tr.Attempts) != 1 || tr.Hedged {
		t.Fatalf("write trace: %+v", tr)
	}
	if a := tr.Attempts[0]; a.Role != "primary" || !a.Won || a.Endpoint != r.endpoint {
		t.Fatalf("write attempt: %+v (answered by %s)", a, r.endpoint)
	}
}

func TestTrace_BatchGetsAnIDPerElement(t *testing.T) {
	h := newHarness(t, nil, sim.Config{})
	r := h.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]},` +
		`{"jsonrpc":"2.0","id":2,"method":"eth_chainId","params":[]},` +
		`{"jsonrpc":"2.0","id":3},` +
		`{"jsonrpc":"2.0","method":"eth_blockNumber","params":[]}]`)
	if r.status != 200 {
		t.Fatalf("HTTP %d %s", r.status, r.body)
	}
	got := strings.Split(r.id, ",")
	if len(got) != 4 {
		t.Fatalf("%s = %q, want 4 ids", engine.HeaderRequestID, r.id)
	}
	want := []struct{ method, outcome string }{{"eth_blockNumber", "answered"}, {"eth_chainId", "answered"}, {"", "error"}, {"eth_blockNumber", "answered"}}
	for i, id := range got {
		tr := h.trace(id)
		if tr.ID != id || tr.Method != want[i].method || tr.Outcome != want[i].outcome {
			t.Errorf("element %d (id %s): %+v, want method %q outcome %s", i, id, tr, want[i].method, want[i].outcome)
		}
	}
	if tr := h.trace(got[2]); tr.ErrorCode != -32600 || len(tr.Attempts) != 0 {
		t.Errorf("invalid element: %+v, want error -32600 and no attempt", tr)
	}
}

// A batch's ids are listed while the list stays short; past 2 KB the header
// gives their range, so a 1000-call batch's answer stays within what
// clients and proxies accept of a header (aiohttp 8190 bytes).
func TestTrace_LargeBatchGetsTheRangeOfItsIDs(t *testing.T) {
	h := newHarness(t, nil, sim.Config{})
	batch := func(n int) string {
		calls := make([]string, n)
		for i := range calls {
			m := "eth_chainId"
			if i == 0 {
				m = "eth_blockNumber"
			}
			calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":[]}`, i, m)
		}
		return "[" + strings.Join(calls, ",") + "]"
	}
	listed := h.post(batch(300))
	if listed.status != 200 {
		t.Fatalf("HTTP %d %s", listed.status, listed.body)
	}
	if ids := strings.Split(listed.id, ","); len(ids) != 300 || ids[0] != "1" || ids[299] != "300" {
		t.Fatalf("300 calls: %s = %q, want the ids 1 to 300 listed", engine.HeaderRequestID, listed.id)
	}
	large := h.post(batch(1000))
	if large.status != 200 {
		t.Fatalf("HTTP %d %s", large.status, large.body)
	}
	if large.id != "301-1300" {
		t.Fatalf("1000 calls: %s = %q (%d bytes), want the range 301-1300", engine.HeaderRequestID, large.id, len(large.id))
	}
	if tr := h.trace("301"); tr.Method != "eth_blockNumber" || tr.Outcome != "answered" {
		t.Errorf("first element: %+v", tr)
	}
	if tr := h.trace("1300"); tr.Method != "eth_chainId" || tr.Outcome != "answered" {
		t.Errorf("last element: %+v", tr)
	}
	if code, b := h.adminDo("GET", "/v1/requests/301-1300", ""); code != 400 || !strings.Contains(string(b), "FIRST-LAST") {
		t.Errorf("GET /v1/requests/301-1300: HTTP %d %s, want a 400 saying to ask for one id of the range", code, b)
	}
}

func TestTrace_FiltersSelectTheRequests(t *testing.T) {
	h := newHarness(t, hedgeOn("30ms"), sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(2 * time.Millisecond)})
	fast := h.call(1, "eth_blockNumber")
	mustOK(t, fast)
	failed := h.call(2, "eth_getFilterChanges", "0x77") // never created: rpcdash's own error
	if failed.rpcError() == nil {
		t.Fatalf("want an error, got %s", failed.body)
	}
	for _, s := range h.sims {
		s.SetExtraLatency(150 * time.Millisecond)
	}
	slow := h.call(3, "eth_getBalance", addr, "latest") // both slow: hedged, and slow
	mustOK(t, slow)
	if !slow.hedged {
		t.Fatalf("the slow request was not hedged: %+v", h.trace(slow.id))
	}
	for q, want := range map[string][]string{
		"":                        {slow.id, failed.id, fast.id},
		"limit=2":                 {slow.id, failed.id},
		"slow_ms=100":             {slow.id},
		"failed=true":             {failed.id},
		"method=eth_blockNumber":  {fast.id},
		"method=ETH_BLOCKNUMBER":  {fast.id},
		"hedged=true":             {slow.id},
		"hedged=true&failed=true": nil,
		"failed=false&limit=100":  {slow.id, failed.id, fast.id},
	} {
		if got := ids(h.traces(q)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("?%s: %v, want %v", q, got, want)
		}
	}
	if tr := h.trace(failed.id); tr.Outcome != "error" || tr.ErrorCode == 0 || len(tr.Attempts) != 0 {
		t.Errorf("failed request: %+v", tr)
	}
	for q, field := range map[string]string{
		"slow_ms=abc": "slow_ms:", "slow_ms=-1": "slow_ms:", "failed=maybe": "failed:", "hedged=2": "hedged:",
		"limit=0": "limit:", "limit=1001": "limit:", "method=": "method:", "color=red": "color:",
	} {
		code, b := h.adminDo("GET", "/v1/requests?"+q, "")
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if code != 400 || !strings.HasPrefix(e.Error, field) {
			t.Errorf("?%s: HTTP %d %s, want 400 starting %q", q, code, b, field)
		}
	}
	code, b := h.adminDo("GET", "/v1/requests/abc", "")
	if code != 400 || !strings.Contains(string(b), `"id:`) {
		t.Errorf("/v1/requests/abc: HTTP %d %s", code, b)
	}
}

func TestTrace_RingEvictsTheOldest(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.TraceRequests = 3 }, sim.Config{})
	var sent []string
	for i := range 5 {
		r := h.call(i, "eth_blockNumber")
		mustOK(t, r)
		sent = append(sent, r.id)
	}
	got := h.traces("")
	if got.Capacity != 3 || fmt.Sprint(ids(got)) != fmt.Sprint([]string{sent[4], sent[3], sent[2]}) {
		t.Fatalf("ring: capacity %d, %v; sent %v", got.Capacity, ids(got), sent)
	}
	code, b := h.adminDo("GET", "/v1/requests/"+sent[0], "")
	if code != 404 || !strings.Contains(string(b), "request "+sent[0]) {
		t.Fatalf("evicted request: HTTP %d %s", code, b)
	}
	h.trace(sent[2])
}

func TestTrace_OffSendsNoIDAndKeepsNothing(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.TraceRequests = 0 }, sim.Config{})
	r := h.call(1, "eth_blockNumber")
	mustOK(t, r)
	if r.id != "" || r.endpoint != "s0" {
		t.Fatalf("tracing off: %s = %q (endpoint %q)", engine.HeaderRequestID, r.id, r.endpoint)
	}
	if got := h.traces(""); got.Enabled || got.Capacity != 0 || len(got.Requests) != 0 {
		t.Fatalf("tracing off: %+v", got)
	}
	code, b := h.adminDo("GET", "/v1/requests/1", "")
	if code != 404 || !strings.Contains(string(b), "server.trace_requests") {
		t.Fatalf("tracing off: HTTP %d %s", code, b)
	}
}

func TestTrace_ConfigBoundsNameTheKey(t *testing.T) {
	for _, n := range []int{-1, 100_001} {
		cfg := baseConfig()
		cfg.Server.TraceRequests = n
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "server.trace_requests") {
			t.Errorf("trace_requests %d: %v", n, err)
		}
	}
}

// Nothing of a client's params, an endpoint's answer or a URL's path or
// query reaches a trace, even when an endpoint's error echoes the params.
func TestTrace_CarriesNoParamsNorURLSecrets(t *testing.T) {
	const param, pathKey, queryKey = "0xdeadbeefsecret", "secretkey123", "TOPSECRETQUERY"
	h := newHarness(t, func(c *engine.Config) {
		for i := range c.Endpoints {
			c.Endpoints[i].URL += "/" + pathKey + "?apikey=" + queryKey
		}
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "dead", URL: "http://127.0.0.1:1/" + pathKey + "?apikey=" + queryKey})
		c.Breaker.Failures = 100
	}, sim.Config{Name: "echo"}, sim.Config{Name: "good", Latency: fixed(5 * time.Millisecond)})
	h.sims[0].SetMode(sim.ModeRPCError)
	h.sims[0].SetRPCError(-32000, "header not found for "+param+" at "+pathKey)
	var seen []string
	for i := range 6 {
		r := h.call(i, "eth_call", map[string]any{"to": addr, "data": param}, "latest")
		seen = append(seen, r.id)
	}
	outcomes := map[string]bool{}
	var all strings.Builder
	for _, id := range seen {
		tr := h.settledTrace(id)
		for _, a := range tr.Attempts {
			outcomes[a.Outcome] = true
		}
		_, b := h.adminDo("GET", "/v1/requests/"+id, "")
		all.Write(b)
	}
	_, b := h.adminDo("GET", "/v1/requests?limit=100", "")
	all.Write(b)
	// The traces say what happened: an endpoint error, a refused
	// connection, an answer (else the test proves nothing).
	if !outcomes["endpoint_error"] || !outcomes["refused"] || !outcomes["answer"] {
		t.Fatalf("attempt outcomes %v, want endpoint_error, refused and answer:\n%s", outcomes, all.String())
	}
	for _, s := range []string{param, pathKey, queryKey, "deadbeef"} {
		if strings.Contains(all.String(), s) {
			t.Fatalf("%q leaked into the traces:\n%s", s, all.String())
		}
	}
}
