package engine_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

var logsFilter = map[string]any{"fromBlock": "0x0", "toBlock": "0x0"}

// takeTurns makes every routable endpoint an equal of the best, so they
// take turns whatever latencies a loaded machine measures.
func takeTurns(c *engine.Config) { c.Router.Tolerance = 100 }

// untilDelivered calls method (a read, each call must succeed) until
// upstream u has been sent one, and returns how many calls it took.
func (h *harness) untilDelivered(u *sim.Upstream, method string, params ...any) int {
	h.t.Helper()
	before := u.MethodCount(method)
	for i := 1; i <= 20; i++ {
		mustOK(h.t, h.call(i, method, params...))
		if u.MethodCount(method) > before {
			return i
		}
	}
	h.t.Fatalf("%s never reached %s in 20 calls", method, u.Name())
	return 0
}

// backoffEvents are the messages of the backoff events of endpoint name.
func (h *harness) backoffEvents(name string) []string {
	var out []string
	for _, ev := range h.events() {
		if ev.Type == engine.EventBackoff && ev.Endpoint == name {
			out = append(out, ev.Message)
		}
	}
	return out
}

// A provider's limit on eth_getLogs backs off eth_getLogs on that endpoint
// only: eth_getBalance still goes there, eth_getLogs goes elsewhere, and no
// client sees an error. (Backing off the whole endpoint would move all its
// load onto the others: a cascade a direct client would not have caused.)
func TestRateLimit_OneMethodsLimitBacksOffThatMethodOnly(t *testing.T) {
	h := newHarness(t, takeTurns, sim.Config{RateLimitMethods: []string{"eth_getLogs"}, RetryAfter: 30 * time.Second}, sim.Config{})
	s0, s1 := h.sims[0], h.sims[1]
	s0.SetMode(sim.ModeRateLimit)
	n := h.untilDelivered(s0, "eth_getLogs", logsFilter) // answered 429, failed over to s1
	ep := h.endpoint("s0")
	if ep.Methods["eth_getLogs"].BackoffUntil.IsZero() || !ep.BackoffUntil.IsZero() || !ep.Routable {
		t.Fatalf("want eth_getLogs backing off on a routable s0: methods[eth_getLogs].backoff_until %v, backoff_until %v, routable %v",
			ep.Methods["eth_getLogs"].BackoffUntil, ep.BackoffUntil, ep.Routable)
	}
	const calls = 40
	for i := 0; i < calls; i++ {
		mustOK(t, h.call(100+i, "eth_getBalance", addr, "latest"))
		mustOK(t, h.call(200+i, "eth_getLogs", logsFilter))
	}
	balance0, balance1 := s0.MethodCount("eth_getBalance"), s1.MethodCount("eth_getBalance")
	logs0, logs1 := s0.MethodCount("eth_getLogs"), s1.MethodCount("eth_getLogs")
	t.Logf("after the 429: eth_getBalance s0 %d s1 %d; eth_getLogs s0 %d s1 %d (of %d + %d calls)", balance0, balance1, logs0, logs1, n, calls)
	if balance0 == 0 {
		t.Errorf("s0 served no eth_getBalance of %d after eth_getLogs's 429: the whole endpoint was backed off", calls)
	}
	if logs0 != 1 || logs1 != int64(n+calls) {
		t.Errorf("eth_getLogs: s0 got %d (want the 1 answered 429), s1 %d (want %d)", logs0, logs1, n+calls)
	}
	if errs := h.status().Totals.ClientErrors; errs != 0 {
		t.Errorf("%d client errors", errs)
	}
	evs := h.backoffEvents("s0")
	if len(evs) != 1 || !containsAll(evs[0], "HTTP 429 on eth_getLogs", "backing off eth_getLogs for 30s", "other methods still routed") {
		t.Errorf("backoff events %q", evs)
	}
}

// 429s on two methods of one endpoint within a back-off span are the
// endpoint's limit, not a method's: the whole endpoint backs off.
func TestRateLimit_TwoMethodsWidenToTheEndpoint(t *testing.T) {
	h := newHarness(t, takeTurns, sim.Config{RateLimitMethods: []string{"eth_getLogs", "eth_getBalance"}, RetryAfter: 30 * time.Second}, sim.Config{})
	s0 := h.sims[0]
	s0.SetMode(sim.ModeRateLimit)
	h.untilDelivered(s0, "eth_getLogs", logsFilter)
	if ep := h.endpoint("s0"); !ep.BackoffUntil.IsZero() || !ep.Routable {
		t.Fatalf("one method's 429 backed off the endpoint: %v", ep.BackoffUntil)
	}
	h.untilDelivered(s0, "eth_getBalance", addr, "latest")
	ep := h.endpoint("s0")
	if ep.BackoffUntil.IsZero() || ep.Routable || ep.Methods["eth_getBalance"].BackoffUntil.IsZero() {
		t.Fatalf("429s on two methods: backoff_until %v, routable %v, methods[eth_getBalance].backoff_until %v; want the endpoint backing off",
			ep.BackoffUntil, ep.Routable, ep.Methods["eth_getBalance"].BackoffUntil)
	}
	// A third method, never limited, no longer goes there either.
	for i := 0; i < 20; i++ {
		mustOK(t, h.call(i, "eth_getCode", addr, "latest"))
	}
	if got := s0.MethodCount("eth_getCode"); got != 0 {
		t.Errorf("s0 got %d eth_getCode while the whole endpoint backs off", got)
	}
	evs := h.backoffEvents("s0")
	if len(evs) != 2 || !containsAll(evs[1], "HTTP 429 on eth_getBalance", "eth_getLogs backing off too", "backing off the whole endpoint for 30s") {
		t.Errorf("backoff events %q", evs)
	}
	if errs := h.status().Totals.ClientErrors; errs != 0 {
		t.Errorf("%d client errors", errs)
	}
}

// A Retry-After of a day is honoured only up to breaker.backoff_max: the
// endpoint asked for 86400 s, it is back after 300 ms, and the event says
// it asked for more.
func TestRateLimit_RetryAfterIsCappedAtBackoffMax(t *testing.T) {
	const capped = 300 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) {
		takeTurns(c)
		c.Breaker.BackoffBase = 100 * time.Millisecond
		c.Breaker.BackoffMax = capped
	}, sim.Config{RetryAfter: 24 * time.Hour}, sim.Config{})
	s0 := h.sims[0]
	s0.SetMode(sim.ModeRateLimit)

	// A client attempt's 429: the pair.
	before := time.Now()
	h.untilDelivered(s0, "eth_getBalance", addr, "latest")
	after := time.Now()
	until := h.endpoint("s0").Methods["eth_getBalance"].BackoffUntil
	if until.Before(before.Add(capped)) || until.After(after.Add(capped)) {
		t.Fatalf("methods[eth_getBalance].backoff_until %s after the call; want %s (backoff_max)", until.Sub(before), capped)
	}
	s0.SetMode(sim.ModeNormal)
	testutil.WaitUntil(t, 5*time.Second, "the capped back-off's end", func() bool { return time.Now().After(until) })
	delivered := s0.MethodCount("eth_getBalance")
	h.untilDelivered(s0, "eth_getBalance", addr, "latest")
	t.Logf("eth_getBalance back on s0 %s after the 429 (Retry-After 86400s)", time.Since(before).Round(time.Millisecond))
	if got := s0.MethodCount("eth_getBalance"); got <= delivered {
		t.Fatalf("s0 got no eth_getBalance after its capped back-off")
	}

	// A probe's 429: the whole endpoint, capped the same way.
	s0.SetMode(sim.ModeRateLimit)
	before = time.Now()
	if res, err := h.eng.Probe(context.Background(), "s0", "eth_blockNumber", nil); err != nil || res.OK {
		t.Fatalf("probe: ok %v err %v", res.OK, err)
	}
	after = time.Now()
	until = h.endpoint("s0").BackoffUntil
	if until.Before(before.Add(capped)) || until.After(after.Add(capped)) {
		t.Fatalf("backoff_until %s after the probe; want %s (backoff_max)", until.Sub(before), capped)
	}
	want := fmt.Sprintf("Retry-After 86400s capped at %s", capped)
	evs := h.backoffEvents("s0")
	if len(evs) != 2 || !strings.Contains(evs[0], want) || !containsAll(evs[1], "HTTP 429 to a probe", want, "backing off the whole endpoint for 300ms") {
		t.Errorf("backoff events %q, want each to say %q", evs, want)
	}
	s0.SetMode(sim.ModeNormal)
	testutil.WaitUntil(t, 5*time.Second, "the capped back-off's end", func() bool { return h.endpoint("s0").Routable })
}

// A write answered 429 is relayed as the endpoint said it, never re-sent
// (it may have been executed); the next writes avoid the pair.
func TestRateLimit_WriteAnswered429IsSentOnce(t *testing.T) {
	h := newHarness(t, takeTurns, sim.Config{RetryAfter: 30 * time.Second}, sim.Config{})
	s0, s1 := h.sims[0], h.sims[1]
	s0.SetMode(sim.ModeRateLimit)
	const write = "eth_sendRawTransaction"
	hit := false
	for i := 0; i < 20 && !hit; i++ {
		sent1 := s1.MethodCount(write)
		r := h.call(i, write, fmt.Sprintf("0x%064x", i))
		if hit = s0.MethodCount(write) == 1; !hit {
			mustOK(t, r)
			continue
		}
		if r.rpcError() == nil || r.attempts != 1 {
			t.Fatalf("the write s0 answered 429: HTTP %d %s, %d attempts; want the 429's error after 1 attempt", r.status, r.body, r.attempts)
		}
		if s1.MethodCount(write) != sent1 {
			t.Fatal("the write s0 answered 429 was re-sent to s1")
		}
	}
	if !hit {
		t.Fatal("no write reached s0 in 20")
	}
	for i := 0; i < 10; i++ {
		mustOK(t, h.call(100+i, write, fmt.Sprintf("0x%064x", 100+i)))
	}
	if got := s0.MethodCount(write); got != 1 {
		t.Errorf("s0 got %d writes, want the 1 answered 429", got)
	}
}

// Retry-After as an HTTP date a day away is capped the same way, and so
// is one in seconds past what a time.Duration holds (9223372037 s, or more
// digits than an int takes): the longest wait there is, not read as no
// Retry-After at all (breaker.backoff_base, the shortest back-off).
func TestRateLimit_RetryAfterDateIsCappedAtBackoffMax(t *testing.T) {
	const capped = 300 * time.Millisecond
	for _, tc := range []struct{ name, event string }{
		{"date", "Retry-After 86"},
		{"9223372037", "capped at 300ms"},
		{"99999999999999999999999", "capped at 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.Add(1)
				retryAfter := tc.name
				if tc.name == "date" {
					retryAfter = time.Now().Add(24 * time.Hour).UTC().Format(http.TimeFormat)
				}
				w.Header().Set("Retry-After", retryAfter)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"rate limited"}}`)
			}))
			t.Cleanup(srv.Close)
			h := newHarness(t, func(c *engine.Config) {
				takeTurns(c)
				c.Breaker.BackoffBase = 10 * time.Millisecond
				c.Breaker.BackoffMax = capped
				c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "asks", URL: srv.URL, Provider: "pa", Region: "ra"})
			}, sim.Config{})
			before := time.Now()
			for i := 0; i < 20 && got.Load() == 0; i++ {
				mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
			}
			after := time.Now()
			if got.Load() != 1 {
				t.Fatalf("the endpoint got %d requests, want 1", got.Load())
			}
			until := h.endpoint("asks").Methods["eth_getBalance"].BackoffUntil
			if until.Before(before.Add(capped)) || until.After(after.Add(capped)) {
				t.Fatalf("Retry-After %s: methods[eth_getBalance].backoff_until %s after the first call; want %s (backoff_max)", tc.name, until.Sub(before), capped)
			}
			if evs := h.backoffEvents("asks"); len(evs) != 1 || !containsAll(evs[0], tc.event, "capped at 300ms") {
				t.Errorf("backoff events %q, want one saying the ask was capped", evs)
			}
		})
	}
}
