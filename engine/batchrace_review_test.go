package engine_test

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// A primary upstream batch that failed (HTTP 500 from s0) after its
// hedge was sent, and before the hedge (s1) answered, has nothing left to
// run on: it ended. It was taken for a primary outrun by its hedge and
// marked running on (batchSampling) with nothing left to clear the mark,
// so s0 took no upstream batch ever again, past breaker.cooldown too.
func TestBatch_APrimaryThatFailedBeforeItsHedgeWonDoesNotKeepItsEndpointFromBatches(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var s0Batches atomic.Int64
	front0 := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if s0Batches.Add(1) == 1 {
			time.Sleep(80 * time.Millisecond) // past the 30 ms hedge delay
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}
		return false
	}, nil)
	front1 := frontOf(t, h.sims[1], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		time.Sleep(200 * time.Millisecond) // answers after s0 failed
		return false
	}, nil)
	h2 := frontedPair(t, front0.URL, front1.URL, func(c *engine.Config) { c.Hedge.Enabled, c.Hedge.Delay, c.Hedge.Budget = true, "30ms", 1 })
	const n = 50
	r := h2.post(balanceBatch(n, strconv.Itoa))
	decodeBatch(t, r, n)
	if r.endpoint != "s1" || !r.hedged {
		t.Fatalf("the first client batch: answered by %q, hedged %v; want s1's hedge (s0 failed)", r.endpoint, r.hedged)
	}
	time.Sleep(1200 * time.Millisecond) // breaker.cooldown (1 s): s0's failed batch is forgiven
	r = h2.post(balanceBatch(n, strconv.Itoa))
	decodeBatch(t, r, n)
	if got := s0Batches.Load(); got != 2 || r.endpoint != "s0" {
		t.Errorf("after breaker.cooldown: s0 was sent %d upstream batches in all and the next client batch answered by %q; want 2 and s0 (the faster) again", got, r.endpoint)
	}
}

// The endpoints an upstream batch may go to were chosen when it was sent;
// its hedge, a delay later, went to the next of them as it was then, even
// when it had been drained meanwhile (or its breaker opened, a fault was
// injected, it failed a batch). s1 is drained while s0 holds the batch:
// the hedge goes nowhere, and s1 hears nothing.
func TestBatch_AHedgeDoesNotGoToAnEndpointDrainedDuringTheDelay(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var admin atomic.Value
	var held atomic.Int64
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if held.Add(1) == 1 {
			req, _ := http.NewRequest("POST", admin.Load().(string)+"/v1/endpoints/s1/drain", nil)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			time.Sleep(300 * time.Millisecond) // past the 100 ms hedge delay
		}
		return false
	}, nil)
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), func(c *engine.Config) { c.Hedge.Enabled, c.Hedge.Delay, c.Hedge.Budget = true, "100ms", 1 })
	admin.Store(h2.admin)
	before := h.sims[1].Counters()
	const n = 50
	r := h2.post(balanceBatch(n, strconv.Itoa))
	decodeBatch(t, r, n)
	if !h2.endpoint("s1").Drained {
		t.Fatal("s1 was not drained: the test exercises nothing")
	}
	if c := h.sims[1].Counters(); c.HTTP != before.HTTP || r.hedged || r.endpoint != "s0" {
		t.Errorf("s1, drained before the hedge delay passed, heard %d requests (%d calls); the batch answered by %q, hedged %v; want none, s0's answer unhedged",
			c.HTTP-before.HTTP, c.Total-before.Total, r.endpoint, r.hedged)
	}
}

// An endpoint's accounting counts a batch's calls as the methods' does:
// the hedge of an upstream batch of 50 is 50 hedge attempts on its
// endpoint, and was counted 50 hedges fired and won for eth_getBalance but
// 1 for the endpoint (its fire rate, hedges over primaries, and its losers
// counted by the call). Whichever endpoint the batch goes to first holds
// it, so that the hedge answers whatever the router measured in the
// warm-up (on a loaded machine s0, behind a front, measured slower than
// s1). The figures are the batch's own, taken against those before it: a
// warm-up read slower than the 30 ms hedge delay is hedged too, and counted
// as it should be.
func TestBatch_AHedgedBatchCountsItsCallsInTheEndpointsAccounting(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var batches atomic.Int64
	holdFirst := func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		return batches.Add(1) == 1 && holdFor(r, 2*time.Second)
	}
	front0, front1 := frontOf(t, h.sims[0], holdFirst, nil), frontOf(t, h.sims[1], holdFirst, nil)
	h2 := frontedPair(t, front0.URL, front1.URL, func(c *engine.Config) { c.Hedge.Enabled, c.Hedge.Delay, c.Hedge.Budget = true, "30ms", 1 })
	const n = 50
	before := map[string]engine.AccountSnapshot{"s0": h2.endpoint("s0").Accounting, "s1": h2.endpoint("s1").Accounting}
	m0 := h2.status().Methods["eth_getBalance"]
	r := h2.post(balanceBatch(n, strconv.Itoa))
	decodeBatch(t, r, n)
	if !r.hedged || batches.Load() != 2 {
		t.Fatalf("answered by %q, hedged %v, %d upstream batches; want the hedge's answer, two upstream batches (the first held)", r.endpoint, r.hedged, batches.Load())
	}
	a0, ok := before[r.endpoint]
	if !ok {
		t.Fatalf("answered by %q", r.endpoint)
	}
	a := h2.endpoint(r.endpoint).Accounting
	m := h2.status().Methods["eth_getBalance"]
	hedges, fired, won := a.Hedge-a0.Hedge, a.HedgesFired-a0.HedgesFired, a.HedgesWon-a0.HedgesWon
	if hedges != n || fired != n || won != n {
		t.Errorf("the batch: %s %d hedge attempts, %d hedges fired, %d won; want %d each (eth_getBalance: %d fired, %d won)",
			r.endpoint, hedges, fired, won, n, m.HedgesFired-m0.HedgesFired, m.HedgesWon-m0.HedgesWon)
	}
}

// An endpoint that hangs on an upstream batch after its answer's header
// (a proxy that streams, a node stalling mid-answer) is found out after
// one, as one hanging before its header is: the batch of 150 timed out
// with status 200 and was taken for a refusal of its size (batches of 100
// from then on), so its two batches of 100 and 50 went to s0 again, each
// hanging to its deadline, before any call ran elsewhere.
func TestBatch_AnEndpointHangingMidAnswerIsFoundOutAfterOneBatch(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var seen batchSizes
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		seen.add(body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("["))
		w.(http.Flusher).Flush()
		holdFor(r, 5*time.Second)
		return true
	}, nil)
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), nil)
	const n = 150
	r := h2.post(balanceBatch(n, strconv.Itoa))
	for i, a := range decodeBatch(t, r, n) {
		if a.Error != nil || a.Result == "" {
			t.Fatalf("element %d: %+v", i, a.Error)
		}
	}
	t.Logf("took %v, answered by %s, %d attempts", r.took.Round(time.Millisecond), r.endpoint, r.attempts)
	if sizes := seen.since(0); len(sizes) != 1 {
		t.Errorf("s0, which hangs mid-answer on batches, was sent upstream batches of %v calls; want one", sizes)
	}
}

// An engine on a clock of its own (Options.Now) sends a batch's reads
// upstream as one batch too: the upstream batch's deadline, a context's,
// was taken from the engine's clock (here 2025-01-01) where every other
// context deadline is the wall clock's, so it had passed before the batch
// was sent, and every call ran alone.
func TestBatch_AnEngineOnItsOwnClockSendsUpstreamBatches(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, nil, sim.Config{Latency: fixed(time.Millisecond)})
	const n = 10
	before := h.sims[0].Counters()
	r := h.post(balanceBatch(n, strconv.Itoa))
	for i, a := range decodeBatch(t, r, n) {
		if a.Error != nil || a.Result == "" {
			t.Fatalf("element %d: %+v", i, a.Error)
		}
	}
	if c := h.sims[0].Counters(); c.HTTP-before.HTTP != 1 || c.Total-before.Total != n {
		t.Errorf("s0 heard %d requests carrying %d calls, want 1 upstream batch of %d", c.HTTP-before.HTTP, c.Total-before.Total, n)
	}
}
