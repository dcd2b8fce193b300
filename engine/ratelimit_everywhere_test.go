package engine_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// limitedEverywhere is three sims answering every call HTTP 429, asking
// for back-offs of 30s, 10s and 20s: s1's ends first.
func limitedEverywhere(t *testing.T, methods ...string) *harness {
	t.Helper()
	h := newHarness(t, takeTurns,
		sim.Config{RetryAfter: 30 * time.Second, RateLimitMethods: methods},
		sim.Config{RetryAfter: 10 * time.Second, RateLimitMethods: methods},
		sim.Config{RetryAfter: 20 * time.Second, RateLimitMethods: methods})
	for _, u := range h.sims {
		u.SetMode(sim.ModeRateLimit)
	}
	return h
}

// mustRateLimited fails unless r is what a direct client of a limited
// provider gets: HTTP 429, a Retry-After in [1, max] seconds and a
// JSON-RPC error -32005 naming no URL.
func mustRateLimited(t *testing.T, h *harness, r reply, max int) {
	t.Helper()
	secs, err := strconv.Atoi(r.retry)
	if r.status != 429 || err != nil || secs < 1 || secs > max {
		t.Fatalf("want HTTP 429 with Retry-After 1..%d, got HTTP %d Retry-After %q: %s", max, r.status, r.retry, r.body)
	}
	e := r.rpcError()
	if code, _ := e["code"].(float64); code != -32005 || !strings.HasPrefix(e["message"].(string), "rate limited") {
		t.Fatalf("want error -32005 \"rate limited…\", got %s", r.body)
	}
	for _, u := range h.sims {
		if strings.Contains(string(r.body), u.URL()) {
			t.Fatalf("the answer names an endpoint's URL: %s", r.body)
		}
	}
}

// Every endpoint answering HTTP 429: once the pool is backing off, a client
// call costs one upstream request (the endpoint whose back-off ends first),
// not one per endpoint, and the client is told to back off as a provider
// would tell it: HTTP 429, Retry-After, -32005. Before, each call went to
// all three endpoints (amplification 3) and failed with -32000.
func TestRateLimit_EverywhereCostsOneUpstreamRequestAndTellsClientToBackOff(t *testing.T) {
	h := limitedEverywhere(t)
	// The first call meets no back-off: it may try every endpoint.
	first := h.call(1, "eth_getBalance", addr, "latest")
	if got := h.upstreamCount("eth_getBalance"); got != 3 {
		t.Fatalf("first call: %d upstream requests, want 3 (no endpoint was backing off)", got)
	}
	const calls = 20
	var last reply
	attempts := 0
	for i := 0; i < calls; i++ {
		last = h.call(2+i, "eth_getBalance", addr, "latest")
		attempts += last.attempts
	}
	counts := []int64{h.sims[0].MethodCount("eth_getBalance"), h.sims[1].MethodCount("eth_getBalance"), h.sims[2].MethodCount("eth_getBalance")}
	t.Logf("upstream requests for %d calls while every endpoint was backing off: %d (s0 %d s1 %d s2 %d)", calls, attempts, counts[0]-1, counts[1]-1, counts[2]-1)
	if total := counts[0] + counts[1] + counts[2] - 3; total != calls || attempts != calls {
		t.Errorf("%d upstream requests (%d attempts reported) for %d calls made while every endpoint was backing off, want %d", total, attempts, calls, calls)
	}
	if counts[1] != 1+calls {
		t.Errorf("s1, whose back-off ends first, got %d requests, want %d", counts[1], 1+calls)
	}
	mustRateLimited(t, h, first, 10)
	mustRateLimited(t, h, last, 10) // s1's 10s, not s2's 20s or s0's 30s
}

// A batch: each element limited everywhere gets -32005 in its place. The
// whole batch is answered HTTP 429, as a limited provider answers it, when
// a client resending all of it resends nothing whose running again
// matters: the other elements are reads. ethers retries a 429, not a
// -32005 in a 200: a filter poll limited beside an eth_blockNumber failed
// its contract.on. A write or a filter call that ran keeps it 200.
func TestRateLimit_BatchElementsLimitedEverywhere(t *testing.T) {
	h := limitedEverywhere(t, "eth_getBalance")
	h.call(1, "eth_getBalance", addr, "latest") // every endpoint backing off eth_getBalance
	before := h.upstreamCount("eth_getBalance")

	var parts []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	limited := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + addr + `","latest"]}`
	reads := h.post(`[` + limited + `,{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}]`)
	if secs, err := strconv.Atoi(reads.retry); reads.status != 429 || err != nil || secs < 1 || secs > 10 {
		t.Fatalf("a batch of reads, one limited: HTTP %d Retry-After %q, want 429 with 1..10: %s", reads.status, reads.retry, reads.body)
	}
	if err := json.Unmarshal(reads.body, &parts); err != nil || len(parts) != 2 ||
		parts[0].Error == nil || parts[0].Error.Code != -32005 || parts[1].Result == nil {
		t.Fatalf("a batch of reads, one limited: want -32005 for eth_getBalance and a result for eth_blockNumber, got %s", reads.body)
	}
	for _, ran := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"eth_sendRawTransaction","params":["0x02f8"]}`,
		`{"jsonrpc":"2.0","id":2,"method":"eth_newBlockFilter","params":[]}`,
	} {
		mixed := h.post(`[` + limited + `,` + ran + `]`)
		if err := json.Unmarshal(mixed.body, &parts); err != nil || mixed.status != 200 || len(parts) != 2 {
			t.Fatalf("a limited read beside %s: HTTP %d %s, want 200", ran, mixed.status, mixed.body)
		}
		if parts[0].Error == nil || parts[0].Error.Code != -32005 || parts[1].Result == nil {
			t.Fatalf("a limited read beside %s: want -32005 and a result, got %s", ran, mixed.body)
		}
	}

	all := h.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + addr + `","latest"]},{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["` + addr + `","0x1"]}]`)
	secs, err := strconv.Atoi(all.retry)
	if all.status != 429 || err != nil || secs < 1 || secs > 10 {
		t.Fatalf("batch limited in every element: HTTP %d Retry-After %q, want 429 with 1..10: %s", all.status, all.retry, all.body)
	}
	if err := json.Unmarshal(all.body, &parts); err != nil || len(parts) != 2 || parts[0].Error == nil || parts[0].Error.Code != -32005 || parts[1].Error == nil || parts[1].Error.Code != -32005 {
		t.Fatalf("batch limited in every element: want two -32005 answers, got %s", all.body)
	}
	if got := h.upstreamCount("eth_getBalance") - before; got != 5 {
		t.Errorf("%d upstream eth_getBalance for 5 limited elements, want 5", got)
	}
}

// Two endpoints backing off as a whole (a probe met their 429) put the pool
// in panic routing, which still lists them after the routable one: a read
// that one answers 429 stops there rather than spending their quota too.
func TestRateLimit_PanicRoutingSendsNo429OnToBackedOffEndpoints(t *testing.T) {
	h := limitedEverywhere(t)
	for _, name := range []string{"s1", "s2"} {
		if res, err := h.eng.Probe(context.Background(), name, "eth_blockNumber", nil); err != nil || res.OK {
			t.Fatalf("probe of %s: ok %v err %v", name, res.OK, err)
		}
	}
	r := h.call(1, "eth_getBalance", addr, "latest")
	if got := h.upstreamCount("eth_getBalance"); got != 1 || h.sims[0].MethodCount("eth_getBalance") != 1 {
		t.Fatalf("%d upstream requests (s0 %d); want 1, to s0, the one not backing off", got, h.sims[0].MethodCount("eth_getBalance"))
	}
	mustRateLimited(t, h, r, 10)
	if !h.status().Panic {
		t.Error("the pool was not in panic routing: the test does not test it")
	}
}

// A burst of attempts in flight as a provider's limit hits is one 429: one
// event, and the back-off its first 429 started, not doubled at each of the
// others (here two reached s0 before the first 429: events "for 1s" then
// "for 2s"; the console showed three alike in one second under a fault).
func TestRateLimit_ABurstInFlightIsOneBackoff(t *testing.T) {
	h := newHarness(t, nil,
		sim.Config{Latency: fixed(100 * time.Millisecond), RateLimitMethods: []string{"eth_getBalance"}},
		sim.Config{Latency: fixed(300 * time.Millisecond)})
	h.sims[0].SetMode(sim.ModeRateLimit)
	before := len(h.events())
	const burst = 8
	done := make(chan reply, burst)
	for i := range burst {
		go func() { done <- h.call(i, "eth_getBalance", addr, "latest") }()
	}
	for range burst {
		mustOK(t, <-done) // s1 answers every one
	}
	var backoffs []string
	for _, ev := range h.events()[before:] {
		if ev.Type == engine.EventBackoff && ev.Endpoint == "s0" {
			backoffs = append(backoffs, ev.Message)
		}
	}
	if len(backoffs) != 1 || !strings.Contains(backoffs[0], "for 1s") {
		t.Fatalf("s0's back-off events: %q; want one, for 1s (breaker.backoff_base)", backoffs)
	}
	for _, m := range h.endpoint("s0").Methods {
		if left := time.Until(m.BackoffUntil); left > 2*time.Second {
			t.Fatalf("s0 backs off eth_getBalance for %s more, want at most the 1s the first 429 started", left)
		}
	}
}

// An injected http429 fault's back-offs end with it: cleared (the console's
// c) or run out, the endpoint serves again at once, as the operator
// expects, instead of sitting out a Retry-After no provider asked for.
func TestRateLimit_ClearingA429FaultLiftsItsBackoffs(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	if code, b := h.adminDo("POST", "/v1/endpoints/s0/fault", `{"mode":"http429","retry_after":"1m"}`); code != 200 {
		t.Fatalf("fault: HTTP %d %s", code, b)
	}
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	if until := h.endpoint("s0").Methods["eth_getBalance"].BackoffUntil; time.Until(until) < 30*time.Second {
		t.Fatalf("s0 backs off eth_getBalance until %s, want the fault's Retry-After 1m", until)
	}
	if code, b := h.adminDo("DELETE", "/v1/endpoints/s0/fault", ""); code != 200 {
		t.Fatalf("clear: HTTP %d %s", code, b)
	}
	ep := h.endpoint("s0")
	if !ep.BackoffUntil.IsZero() || !ep.Routable {
		t.Fatalf("after the fault was cleared s0 still backs off until %s (routable %v)", ep.BackoffUntil, ep.Routable)
	}
	for m, ms := range ep.Methods {
		if !ms.BackoffUntil.IsZero() {
			t.Fatalf("after the fault was cleared s0 still backs off %s until %s", m, ms.BackoffUntil)
		}
	}
	evs := h.events()
	if last := evs[len(evs)-1]; last.Type != engine.EventFault || !strings.Contains(last.Message, "fault cleared; its 429 back-offs lifted") {
		t.Fatalf("last event %+v", last)
	}
}

// ethers batches a filter poll with what else it asks at that moment. The
// poll is pinned to the endpoint holding its filter; that endpoint answering
// 429 failed the poll -32005 inside an HTTP 200, which ethers does not
// retry (its contract.on logged the error); a limited provider answers the
// batch 429, which it retries. The eth_blockNumber beside it is a read.
func TestRateLimit_ABatchedFilterPollLimitedIsAnswered429(t *testing.T) {
	h := newHarness(t, takeTurns, sim.Config{RetryAfter: time.Second}, sim.Config{RetryAfter: time.Second})
	created := h.call(1, "eth_newBlockFilter")
	var id string
	if err := json.Unmarshal(resultOf(t, created), &id); err != nil || created.endpoint == "" {
		t.Fatalf("eth_newBlockFilter: %s", created.body)
	}
	for _, u := range h.sims {
		if u.Name() == created.endpoint {
			u.SetMode(sim.ModeRateLimit)
		}
	}
	r := h.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_getFilterChanges","params":["` + id + `"]},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}]`)
	if secs, err := strconv.Atoi(r.retry); r.status != 429 || err != nil || secs < 1 {
		t.Fatalf("a filter poll limited beside eth_blockNumber: HTTP %d Retry-After %q, want 429: %s", r.status, r.retry, r.body)
	}
	var parts []struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &parts); err != nil || len(parts) != 2 || parts[0].Error == nil || parts[0].Error.Code != -32005 || parts[1].Result == nil {
		t.Fatalf("want -32005 for the poll and a result for eth_blockNumber: %s", r.body)
	}
}
