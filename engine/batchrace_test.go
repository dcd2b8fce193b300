package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// batchSizes records the size of every upstream batch a front was sent.
type batchSizes struct {
	mu    sync.Mutex
	sizes []int
}

func (b *batchSizes) add(body []byte) int {
	var calls []json.RawMessage
	json.Unmarshal(body, &calls)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sizes = append(b.sizes, len(calls))
	return len(calls)
}

func (b *batchSizes) since(k int) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.sizes[k:]...)
}

// An endpoint that takes batches of at most 100 calls (geth with
// --rpc.batch-request-limit 100, a provider's limit) answers a larger one
// as geth does: one error, "batch too large", with the first call's id.
// The client's batch of 300 is answered in full, each element its own
// balance; rpcdash sends that endpoint batches of 100 from then on, and
// the next client batch goes in three of them at once, for
// server.stats_window: then a larger batch is tried again (the refusal
// may have been an HTTP 500 of the moment).
func TestBatch_AnEndpointThatTakesOnlySmallBatchesGetsThemInHundreds(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	var seen batchSizes
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if seen.add(body) <= 100 {
			return false
		}
		var first []struct{ ID json.RawMessage }
		json.Unmarshal(body, &first)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `[{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"batch too large"}}]`, first[0].ID)
		return true
	}, nil)
	clock := testutil.NewClock(time.Now())
	h2 := newClockedHarness(t, clock, func(c *engine.Config) { c.Endpoints[0].URL = front.URL }, sim.Config{})
	const n = 300
	want := balancesOf(t, h.sims[0].URL(), n)
	for round := range 3 {
		if round == 2 {
			clock.Advance(engine.Default().Server.StatsWindow)
		}
		k := len(seen.since(0))
		r := h2.post(balanceBatch(n, strconv.Itoa))
		for i, a := range decodeBatch(t, r, n) {
			if string(a.ID) != strconv.Itoa(i) || a.Result != want[i] || a.Error != nil {
				t.Fatalf("round %d, answer %d: id %s result %q error %v, want id %d result %q", round, i, a.ID, a.Result, a.Error, i, want[i])
			}
		}
		sizes := seen.since(k)
		t.Logf("round %d: %v, upstream batches to s0 %v", round, r.took.Round(time.Millisecond), sizes)
		wantSizes := []int{100, 100, 100}
		if round != 1 {
			wantSizes = append([]int{n}, wantSizes...)
		}
		if fmt.Sprint(sizes) != fmt.Sprint(wantSizes) {
			t.Errorf("round %d: s0 was sent upstream batches of %v calls, want %v", round, sizes, wantSizes)
		}
		if r.took > time.Second {
			t.Errorf("round %d took %v", round, r.took)
		}
	}
}

// heldFirstBatchPair is frontedPair with hedging on at a fixed 30 ms (and
// a budget of 1) and s0 holding the first upstream batch it is sent for
// two seconds; held counts the upstream batches s0 was sent.
func heldFirstBatchPair(t *testing.T) (h, h2 *harness, held *atomic.Int64) {
	t.Helper()
	h = newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	held = new(atomic.Int64)
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		return held.Add(1) == 1 && holdFor(r, 2*time.Second) // then s0's answer, if its client waited
	}, nil)
	h2 = frontedPair(t, front.URL, h.sims[1].URL(), func(c *engine.Config) { c.Hedge.Enabled, c.Hedge.Delay, c.Hedge.Budget = true, "30ms", 1 })
	return h, h2, held
}

// An upstream batch is hedged as a single read is: s0, the faster, holds
// this batch for two seconds; at the hedge delay (fixed here, 30 ms) the
// batch goes to s1 too, whose answer the client gets. (Its 50 calls cost
// 50 units of hedge budget, which a budget of 1 has after 70 reads.) The
// batch s0 holds runs on to its answer, learnt as it is (no batch goes to
// s0 meanwhile), and the next client batch goes to s1 first. Without the
// hedge the client waited until s0's batch failed (a heavy-tail endpoint's
// tail held a thousand-read batch for 1.2 s against 74 ms at most sent
// directly).
func TestBatch_ASlowUpstreamBatchIsHedged(t *testing.T) {
	t.Parallel()
	h, h2, held := heldFirstBatchPair(t)
	const n = 50
	want := balancesOf(t, h.sims[1].URL(), n)
	before := h.sims[1].Counters()
	r := h2.post(balanceBatch(n, strconv.Itoa))
	for i, a := range decodeBatch(t, r, n) {
		if a.Result != want[i] {
			t.Fatalf("answer %d: %q, want %q", i, a.Result, want[i])
		}
	}
	if r.took > time.Second || r.endpoint != "s1" || !r.hedged || r.attempts != 2*n {
		t.Errorf("the client batch took %v, answered by %q, hedged %v, %d attempts; want well under the 2 s s0 held it, by s1, hedged, %d attempts (two upstream batches of %d)",
			r.took, r.endpoint, r.hedged, r.attempts, 2*n, n)
	}
	if c := h.sims[1].Counters(); c.HTTP-before.HTTP != 1 || c.Total-before.Total != n {
		t.Errorf("s1 heard %d requests carrying %d calls, want the hedge: 1 upstream batch of %d", c.HTTP-before.HTTP, c.Total-before.Total, n)
	}
	m := h2.status().Methods["eth_getBalance"]
	if m.HedgesFired < n || m.HedgesWon < n {
		t.Errorf("eth_getBalance: %d hedges fired, %d won; want at least the batch's %d each", m.HedgesFired, m.HedgesWon, n)
	}
	first := strings.Split(r.id, ",")[0]
	r = h2.post(balanceBatch(n, strconv.Itoa))
	decodeBatch(t, r, n)
	if r.endpoint != "s1" || r.took > time.Second {
		t.Errorf("the next client batch: answered by %q in %v, want s1 at once (s0's held batch is still running)", r.endpoint, r.took)
	}
	if got := held.Load(); got != 1 {
		t.Errorf("s0 was sent %d upstream batches while it held one, want 1", got)
	}
	tr := h2.settledTrace(first)
	var got []string
	for _, a := range tr.Attempts {
		got = append(got, fmt.Sprintf("%s %s %s won=%v %s", a.Endpoint, a.Role, a.Outcome, a.Won, a.CancelReason))
	}
	if want := "[s0 primary answer won=false kept_running s1 hedge answer won=true ]"; fmt.Sprint(got) != want {
		t.Errorf("the first element's trace: %v, want %s (s0's batch kept running to its answer)", got, want)
	}
	if m := h2.status().Methods["eth_getBalance"]; m.Losers < n {
		t.Errorf("eth_getBalance counted %d losers, want at least the %d calls of s0's batch", m.Losers, n)
	}
}

// Hedging off: an upstream batch waits for its endpoint, as a direct
// client's would, and is sent nowhere else.
func TestBatch_HedgingOffSendsABatchOnce(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var batches atomic.Int64
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		batches.Add(1)
		time.Sleep(300 * time.Millisecond)
		return false
	}, nil)
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), func(c *engine.Config) { c.Hedge.Enabled = false })
	before := h.sims[1].Counters()
	r := h2.post(balanceBatch(20, strconv.Itoa))
	decodeBatch(t, r, 20)
	if r.endpoint != "s0" || r.hedged || r.attempts != 20 || batches.Load() != 1 {
		t.Errorf("answered by %q, hedged %v, %d attempts, s0 sent %d batches; want s0's answer, unhedged, 20 attempts, 1 batch", r.endpoint, r.hedged, r.attempts, batches.Load())
	}
	if c := h.sims[1].Counters(); c.HTTP != before.HTTP {
		t.Errorf("s1 heard %d requests, want none", c.HTTP-before.HTTP)
	}
	if !bytes.Contains(r.body, []byte(`"result"`)) {
		t.Errorf("answer %.200s", r.body)
	}
}

// The bytes of an upstream batch's answer that was not taken (here its
// answers come in another order) are given back to the batch's bound on
// its answers (server.max_response_bytes) before its calls run alone:
// they were charged twice, and a batch whose answers fit the bound once
// was cut with -32003, which a client sending it directly never sees.
func TestBatch_AnUpstreamAnswerNotTakenIsNotChargedTwice(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	const n = 50
	direct, err := http.Post(h.sims[0].URL(), "application/json", strings.NewReader(balanceBatch(n, strconv.Itoa)))
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := io.ReadAll(direct.Body)
	direct.Body.Close()
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		resp, err := http.Post(h.sims[0].URL(), "application/json", bytes.NewReader(body))
		if err != nil {
			w.WriteHeader(502)
			return true
		}
		var parts []json.RawMessage
		json.NewDecoder(resp.Body).Decode(&parts)
		resp.Body.Close()
		slices.Reverse(parts)
		out, _ := json.Marshal(parts)
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
		return true
	}, nil)
	// Room for the answers once and a half: read twice, they do not fit.
	bound := int64(len(whole)) * 3 / 2
	h2 := newHarness(t, func(c *engine.Config) {
		c.Endpoints[0].URL = front.URL
		c.Server.MaxResponseBytes = bound
	}, sim.Config{})
	r := h2.post(balanceBatch(n, strconv.Itoa))
	for i, a := range decodeBatch(t, r, n) {
		if a.Error != nil || a.Result == "" {
			t.Fatalf("answer %d of a batch whose answers take %d bytes, bound %d: %+v", i, len(whole), bound, a.Error)
		}
	}
	if r.attempts != 2*n {
		t.Errorf("%d attempts, want %d: the upstream batch, then each call alone", r.attempts, 2*n)
	}
}

// The batch hedge delay is learnt from upstream batches' own round trips
// (15 ms here), shown in /v1/status once hedge.min_samples of them are
// known; until then batches wait their methods' delays (cold: 250 ms).
func TestBatch_TheBatchHedgeDelayIsLearntFromBatchRoundTrips(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = true },
		sim.Config{Latency: fixed(15 * time.Millisecond)}, sim.Config{Latency: fixed(15 * time.Millisecond)})
	for range 19 {
		decodeBatch(t, h.post(balanceBatch(10, strconv.Itoa)), 10)
	}
	if hs := h.status().Hedge; hs.BatchRoundTrips != 19 || hs.BatchDelay != 0 {
		t.Fatalf("after 19 upstream batches: %d round trips, delay %v; want 19, none learnt yet", hs.BatchRoundTrips, hs.BatchDelay)
	}
	decodeBatch(t, h.post(balanceBatch(10, strconv.Itoa)), 10)
	hs := h.status().Hedge
	if hs.BatchRoundTrips != 20 || hs.BatchDelay < 15*time.Millisecond || hs.BatchDelay > 150*time.Millisecond {
		t.Errorf("after 20 upstream batches of 15 ms: %d round trips, delay %v; want 20 and their 95th percentile, at least 15 ms and far below the cold 250 ms", hs.BatchRoundTrips, hs.BatchDelay)
	}
}

// A hedged upstream batch reads two answers, and only the one taken counts
// against the batch's bound on its answers: s0 sends nine tenths of its
// answer and stalls, the hedge's whole answer comes from s1. Charged as
// they were read, the two took 1.9 times the answers' size, over a bound
// of 1.5 times it, and the client's batch was cut with -32003, which the
// same batch sent to either endpoint directly never is.
func TestBatch_AHedgedBatchIsChargedOnlyTheAnswerTaken(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	const n = 50
	answer := func(u *sim.Upstream, body []byte) []byte {
		resp, err := http.Post(u.URL(), "application/json", bytes.NewReader(body))
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	whole := answer(h.sims[0], []byte(balanceBatch(n, strconv.Itoa)))
	stalled, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	var s0Batches atomic.Int64
	front0 := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if s0Batches.Add(1) > 1 {
			return false
		}
		b := answer(h.sims[0], body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b[:len(b)*9/10])
		w.(http.Flusher).Flush()
		close(stalled)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return true
	}, nil)
	front1 := frontOf(t, h.sims[1], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		<-stalled
		time.Sleep(50 * time.Millisecond) // s0's nine tenths are read meanwhile
		return false
	}, nil)
	bound := int64(len(whole)) * 3 / 2
	h2 := newHarness(t, func(c *engine.Config) {
		c.Endpoints[0].URL, c.Endpoints[1].URL = front0.URL, front1.URL
		c.Server.MaxResponseBytes = bound
		c.Hedge.Enabled, c.Hedge.Delay, c.Hedge.Budget = true, "30ms", 1
	}, sim.Config{}, sim.Config{})
	for i := range 50 { // budget for the hedge; s0 first by name when equal
		mustOK(t, h2.call(i, "eth_chainId"))
	}
	r := h2.post(balanceBatch(n, strconv.Itoa))
	for i, a := range decodeBatch(t, r, n) {
		if a.Error != nil || a.Result == "" {
			t.Fatalf("answer %d (answers %d bytes, bound %d; answered by %q, hedged %v): %+v", i, len(whole), bound, r.endpoint, r.hedged, a.Error)
		}
	}
	if r.endpoint != "s1" || !r.hedged {
		t.Errorf("answered by %q, hedged %v; want the hedge's answer, from s1", r.endpoint, r.hedged)
	}
}

// An upstream batch that fails as a whole fails over as one batch to the
// next endpoint, as a read fails over, before its calls would run alone:
// s0 answers batches HTTP 500 (its single calls it serves), and the
// client's batch of 20 is answered by s1 from one upstream batch, where
// it was 20 single calls (to s0, the faster).
func TestBatch_AFailedUpstreamBatchFailsOverAsABatch(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var singles atomic.Int64
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		w.WriteHeader(http.StatusInternalServerError)
		return true
	}, &singles)
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), nil)
	const n = 20
	want := balancesOf(t, h.sims[1].URL(), n)
	singlesBefore, before := singles.Load(), h.sims[1].Counters()
	r := h2.post(balanceBatch(n, strconv.Itoa))
	for i, a := range decodeBatch(t, r, n) {
		if a.Result != want[i] {
			t.Fatalf("answer %d: %q, want %q", i, a.Result, want[i])
		}
	}
	c := h.sims[1].Counters()
	if r.endpoint != "s1" || r.attempts != 2*n || c.HTTP-before.HTTP != 1 || c.Total-before.Total != n || singles.Load() != singlesBefore {
		t.Errorf("answered by %q, %d attempts; s1 heard %d requests carrying %d calls, s0 %d single calls; want s1, %d attempts, one upstream batch of %d, none alone",
			r.endpoint, r.attempts, c.HTTP-before.HTTP, c.Total-before.Total, singles.Load()-singlesBefore, 2*n, n)
	}
	if a := h2.endpoint("s1").Accounting; a.Failover != n {
		t.Errorf("s1 counted %d failover attempts, want the batch's %d", a.Failover, n)
	}
	tr := h2.settledTrace(strings.Split(r.id, ",")[0])
	var got []string
	for _, a := range tr.Attempts {
		got = append(got, fmt.Sprintf("%s %s %s %d won=%v", a.Endpoint, a.Role, a.Outcome, a.HTTPStatus, a.Won))
	}
	if want := "[s0 primary http_error 500 won=false s1 failover answer 200 won=true]"; fmt.Sprint(got) != want {
		t.Errorf("the first element's trace: %v, want %s", got, want)
	}
}
