package engine_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// hedgeTrace is a trace with its hedge fields read by their JSON names
// (the outer fields win over RequestTrace's own).
type hedgeTrace struct {
	engine.RequestTrace
	HedgeDelayMS *float64 `json:"hedge_delay_ms"`
	HedgeRefused string   `json:"hedge_refused"`
	raw          string
}

// hedgeDelayMS is hedge_delay_ms, -1 when absent.
func (tr hedgeTrace) hedgeDelayMS() float64 {
	if tr.HedgeDelayMS == nil {
		return -1
	}
	return *tr.HedgeDelayMS
}

// hedgeTraceOf is request id's trace once its attempts have ended.
func (h *harness) hedgeTraceOf(id string) hedgeTrace {
	h.t.Helper()
	h.settledTrace(id)
	code, b := h.adminDo("GET", "/v1/requests/"+id, "")
	var tr hedgeTrace
	if err := json.Unmarshal(b, &tr); code != 200 || err != nil {
		h.t.Fatalf("GET /v1/requests/%s: HTTP %d %s (%v)", id, code, b, err)
	}
	tr.raw = string(b)
	return tr
}

// A trace says which hedge delay a read was under: the method's delay in
// force (a live change shows in the next request), and none for a request
// that is never hedged (a write, a read whose method has hedging off).
func TestTrace_ShowsTheHedgeDelayInForce(t *testing.T) {
	h := newHarness(t, hedgeOn("50ms"),
		sim.Config{Latency: fixed(300 * time.Millisecond)},
		sim.Config{Latency: fixed(20 * time.Millisecond)})

	r := h.call(1, "eth_getBalance", addr, "latest") // cold: s0 is the primary
	mustOK(t, r)
	tr := h.hedgeTraceOf(r.id)
	if !tr.Hedged || tr.hedgeDelayMS() != 50 || tr.HedgeRefused != "" {
		t.Fatalf("hedged read: want hedge_delay_ms 50, no hedge_refused: %s", tr.raw)
	}

	if code, b := h.adminDo("PUT", "/v1/hedge", `{"method":"eth_getBalance","delay":"80ms"}`); code != 200 {
		t.Fatalf("PUT /v1/hedge: HTTP %d %s", code, b)
	}
	r = h.call(2, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if tr = h.hedgeTraceOf(r.id); tr.hedgeDelayMS() != 80 {
		t.Fatalf("after a live change to 80ms: %s", tr.raw)
	}

	r = h.call(3, "eth_sendRawTransaction", "0x02f8")
	if tr = h.hedgeTraceOf(r.id); tr.Class != "write" || tr.HedgeDelayMS != nil || tr.HedgeRefused != "" {
		t.Fatalf("write: want no hedge_delay_ms: %s", tr.raw)
	}

	if code, b := h.adminDo("PUT", "/v1/hedge", `{"method":"eth_getBalance","enabled":false}`); code != 200 {
		t.Fatalf("PUT /v1/hedge: HTTP %d %s", code, b)
	}
	r = h.call(4, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if tr = h.hedgeTraceOf(r.id); tr.Hedged || tr.HedgeDelayMS != nil || tr.HedgeRefused != "" {
		t.Fatalf("hedging off for the method: want no hedge_delay_ms: %s", tr.raw)
	}
}

// waitTrace polls GET /v1/requests?query until cond holds of a trace, for
// at most 5 s.
func waitTrace(t *testing.T, h *harness, query string, cond func(hedgeTrace) bool) hedgeTrace {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, b := h.adminDo("GET", "/v1/requests?"+query, "")
		var out struct {
			Requests []json.RawMessage `json:"requests"`
		}
		if err := json.Unmarshal(b, &out); code != 200 || err != nil {
			t.Fatalf("GET /v1/requests?%s: HTTP %d %s (%v)", query, code, b, err)
		}
		for _, raw := range out.Requests {
			var tr hedgeTrace
			json.Unmarshal(raw, &tr)
			if tr.raw = string(raw); cond(tr) {
				return tr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no trace of %s as wanted after 5s: %s", query, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A slow read whose hedge fell due and was not sent says why in its trace:
// the hedge budget spent, hedge.max_outstanding hedges of the method in
// flight, hedging paused by the saturation guard, a 429 (never hedged),
// no endpoint to send it to (hedge.same_domain false). Its delay is there
// all the same.
func TestTrace_SaysWhyADueHedgeWasNotSent(t *testing.T) {
	t.Parallel()
	slow := sim.Config{Latency: fixed(time.Second)}
	t.Run("budget", func(t *testing.T) {
		h := newHarness(t, func(c *engine.Config) {
			hedgeOn("20ms")(c)
			// One hedge of eth_getBalance (weight 2), then 0.02 a read.
			c.Hedge.Budget, c.Hedge.BudgetBurst = 0.01, 2
		}, sim.Config{Latency: fixed(200 * time.Millisecond)}, sim.Config{Latency: fixed(200 * time.Millisecond)})
		first := h.call(1, "eth_getBalance", addr, "latest")
		mustOK(t, first)
		if !first.hedged {
			t.Fatalf("the first read, within the burst, was not hedged: %s", h.hedgeTraceOf(first.id).raw)
		}
		r := h.call(2, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		tr := h.hedgeTraceOf(r.id)
		if r.hedged || tr.HedgeRefused != "budget" || tr.hedgeDelayMS() != 20 {
			t.Fatalf("budget spent: want hedge_refused budget, hedge_delay_ms 20: %s", tr.raw)
		}
		t.Logf("%s", tr.raw)
		wantRefusedCount(t, h, "eth_getBalance", "budget")
	})
	t.Run("max_outstanding", func(t *testing.T) {
		h := newHarness(t, func(c *engine.Config) {
			hedgeOn("20ms")(c)
			c.Hedge.MaxOutstanding = 1
			c.Hedge.Budget, c.Hedge.BudgetBurst = 1, 100
		}, slow, slow)
		done := make(chan reply, 1)
		go func() { done <- h.call(1, "eth_getBalance", addr, "latest") }()
		// The first read's hedge runs for a second: the method's one.
		waitTrace(t, h, "hedged=true", func(hedgeTrace) bool { return true })
		r := h.call(2, "eth_getBalance", addr, "latest")
		mustOK(t, <-done)
		mustOK(t, r)
		tr := h.hedgeTraceOf(r.id)
		if r.hedged || tr.HedgeRefused != "max_outstanding" || tr.hedgeDelayMS() != 20 {
			t.Fatalf("one hedge of the method in flight, max_outstanding 1: %s", tr.raw)
		}
		t.Logf("%s", tr.raw)
		wantRefusedCount(t, h, "eth_getBalance", "max_outstanding")
	})
	t.Run("paused", func(t *testing.T) {
		h := newHarness(t, func(c *engine.Config) {
			hedgeOn("20ms")(c)
			c.Hedge.MaxInflight = 1
		}, slow, slow)
		done := make(chan reply, 1)
		go func() { done <- h.call(1, "eth_sendRawTransaction", "0x02f8") }() // never hedged; in flight for a second
		waitTrace(t, h, "method=eth_sendRawTransaction", func(tr hedgeTrace) bool { return len(tr.Attempts) > 0 })
		r := h.call(2, "eth_getBalance", addr, "latest") // 2 in flight > hedge.max_inflight 1
		<-done
		mustOK(t, r)
		tr := h.hedgeTraceOf(r.id)
		if r.hedged || tr.HedgeRefused != "paused" || tr.hedgeDelayMS() != 20 {
			t.Fatalf("2 requests in flight, hedge.max_inflight 1: %s", tr.raw)
		}
		t.Logf("%s", tr.raw)
		wantRefusedCount(t, h, "eth_getBalance", "paused")
	})
	t.Run("rate_limited", func(t *testing.T) {
		// The 429 comes back well within the 100 ms delay; the failover
		// then runs three delays long, so the hedge falls due beside it.
		h := newHarness(t, hedgeOn("100ms"), sim.Config{}, sim.Config{Latency: fixed(300 * time.Millisecond)}, sim.Config{Latency: fixed(300 * time.Millisecond)})
		h.sims[0].SetMode(sim.ModeRateLimit)
		r := h.call(1, "eth_getBalance", addr, "latest") // cold: s0 is the primary
		mustOK(t, r)
		tr := h.hedgeTraceOf(r.id)
		if r.hedged || tr.HedgeRefused != "rate_limited" || tr.hedgeDelayMS() != 100 || len(tr.Attempts) != 2 || tr.Attempts[0].Outcome != "rate_limited" {
			t.Fatalf("primary answered 429: %s", tr.raw)
		}
		t.Logf("%s", tr.raw)
		wantRefusedCount(t, h, "eth_getBalance", "rate_limited")
	})
	t.Run("no_endpoint", func(t *testing.T) {
		h := newHarness(t, func(c *engine.Config) {
			hedgeOn("50ms")(c)
			sharedFate(c)
			c.Hedge.SameDomain = false
		}, sim.Config{Latency: fixed(200 * time.Millisecond)}, sim.Config{Latency: fixed(10 * time.Millisecond)})
		r := h.call(1, "eth_getBalance", addr, "latest") // cold: s0 is the primary
		mustOK(t, r)
		tr := h.hedgeTraceOf(r.id)
		if r.hedged || tr.HedgeRefused != "no_endpoint" || tr.hedgeDelayMS() != 50 {
			t.Fatalf("only the primary's failure domain left, same_domain false: %s", tr.raw)
		}
		t.Logf("%s", tr.raw)
		wantRefusedCount(t, h, "eth_getBalance", "no_endpoint")
	})
}

// While the queue guard holds hedging (every endpoint ten times slower at
// once), a read whose hedge falls due says so: queue, not paused.
func TestTrace_SaysTheQueueGuardHeldItsHedge(t *testing.T) {
	// A fixed delay between the answers before (20 ms) and during (220 ms)
	// the slowdown: every slow read's hedge falls due. The auto delay
	// follows the slowdown up, and on a loaded machine it passed 220 ms
	// before the guard paused, so no hedge fell due to be held.
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled, c.Hedge.Delay = true, "60ms" },
		sim.Config{Latency: fixed(20 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)},
		sim.Config{Latency: fixed(20 * time.Millisecond)})
	stop := background(h, 8)
	defer stop()
	waitForBases(t, h)
	for _, u := range h.sims {
		setMode(t, u, sim.ControlRequest{ExtraLatency: ptr("200ms")})
	}
	if s := waitHedge(t, h, 10*time.Second, func(hs engine.HedgeStatus) bool { return hs.Paused }); !s.Hedge.Paused {
		t.Fatal("every endpoint 10× slower: hedging not paused")
	}
	// A read started once paused (before, the budget may have run dry as
	// every read was hedged).
	paused := time.Now()
	tr := waitTrace(t, h, "method=eth_getBalance&slow_ms=150", func(tr hedgeTrace) bool {
		return tr.Start.After(paused) && tr.HedgeRefused != ""
	})
	if s := h.status(); !s.Hedge.Paused || !strings.Contains(s.Hedge.PauseReason, "their best recent median") {
		t.Fatalf("hedging no longer paused by the queue guard: %+v", s.Hedge)
	}
	if tr.HedgeRefused != "queue" || tr.HedgeDelayMS == nil {
		t.Fatalf("paused by the queue guard: %s", tr.raw)
	}
	if n := h.status().Methods["eth_getBalance"].HedgesRefused["queue"]; n < 1 {
		t.Fatalf("a read held by the queue guard: hedges_refused queue %d", n)
	}
	t.Logf("%s", tr.raw)
	stop()
}

// wantRefusedCount: the one read of the method whose due hedge was refused
// is counted under its reason, in the status's hedges_refused (and no
// other reason) and in rpcdash_hedges_refused_total, once.
//
// A hedge timer that fires late (rpcdash stalled: a busy machine) holds the
// hedge a delay more and counts it "late", rightly; the counts are checked
// without that reason unless it is the one wanted: the first read's 20 ms
// hedge counted late beside the budget 1 time in 20 on a busy 2-core box.
func wantRefusedCount(t *testing.T, h *harness, method, reason string) {
	t.Helper()
	got := maps.Clone(h.status().Methods[method].HedgesRefused)
	if reason != "late" {
		delete(got, "late")
	}
	if len(got) != 1 || got[reason] != 1 {
		t.Errorf("%s hedges_refused: %v, want %s 1", method, got, reason)
	}
	if line := fmt.Sprintf("rpcdash_hedges_refused_total{method=%q,reason=%q} 1\n", method, reason); !strings.Contains(h.scrape(), line) {
		t.Errorf("/metrics lacks %q", line)
	}
}
