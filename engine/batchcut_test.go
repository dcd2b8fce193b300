package engine_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// attemptsByRole sums rpcdash_attempts_total of method over every
// endpoint and outcome, by role.
func attemptsByRole(text, method string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "rpcdash_attempts_total{")
		if !ok || !strings.Contains(rest, `method="`+method+`"`) {
			continue
		}
		labels, value, _ := strings.Cut(rest, "} ")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(labels, ",") {
			if r, ok := strings.CutPrefix(l, "role="); ok {
				out[strings.Trim(r, `"`)] += v
			}
		}
	}
	return out
}

// An upstream batch that has not answered by its own deadline (twice its
// attempt deadline, here 2 × 250 ms) is raced, as one batch, on the next
// endpoint while it runs on, as a single read's attempt is: the first to
// answer wins. It was cut there and its calls sent again one by one, so
// that a batch slower than its deadline was thrown away with its answer
// on the way. s0 holds every upstream batch for 2 s (its single calls it
// answers at once); hedging is off. The client has s1's answers: one
// upstream batch, a failover for each call; s0's batch runs on to its
// answer, then is a loser for each call, its upstream time counted once.
func TestBatch_AnUpstreamBatchPastItsDeadlineIsRacedAsABatchWhileItRunsOn(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var batches, heldNanos atomic.Int64
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		batches.Add(1)
		start := time.Now()
		gone := holdFor(r, 2*time.Second)
		heldNanos.Store(int64(time.Since(start)))
		return gone // else s0's answer, 2 s late
	}, nil)
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), func(c *engine.Config) { c.Hedge.Enabled = false })
	const n = 10
	want := balancesOf(t, h.sims[1].URL(), n)
	before, metricsBefore, s1Before := h2.status(), attemptsByRole(h2.scrape(), "eth_getBalance"), h.sims[1].Counters()
	r := h2.post(balanceBatch(n, strconv.Itoa))
	for i, a := range decodeBatch(t, r, n) {
		if a.Result != want[i] {
			t.Fatalf("answer %d: %q, want %q", i, a.Result, want[i])
		}
	}
	if batches.Load() != 1 {
		t.Fatalf("s0 was sent %d upstream batches, want the one it held: not the case under test", batches.Load())
	}
	if r.took < 500*time.Millisecond || r.took > 1500*time.Millisecond || r.endpoint != "s1" {
		t.Errorf("the client batch took %v, answered by %q; want s1's answer after s0's batch deadline (500 ms), before s0's (2 s)", r.took, r.endpoint)
	}
	if c := h.sims[1].Counters(); c.HTTP-s1Before.HTTP != 1 || c.Total-s1Before.Total != n {
		t.Errorf("s1 heard %d requests carrying %d calls, want the race: 1 upstream batch of %d", c.HTTP-s1Before.HTTP, c.Total-s1Before.Total, n)
	}
	if r.attempts != 2*n {
		t.Errorf("X-Rpcdash-Attempts %d, want %d: each call in s0's batch and in s1's", r.attempts, 2*n)
	}
	tr := h2.settledTrace(strings.Split(r.id, ",")[0])
	var got []string
	for _, a := range tr.Attempts {
		got = append(got, fmt.Sprintf("%s %s %s won=%v", a.Endpoint, a.Role, a.Outcome, a.Won))
	}
	if fmt.Sprint(got) != "[s0 primary answer won=false s1 failover answer won=true]" {
		t.Errorf("the first element's trace: %v, want [s0 primary answer won=false s1 failover answer won=true]: s0's batch ran on to its answer", got)
	}
	held := time.Duration(heldNanos.Load())
	if held < 1900*time.Millisecond {
		t.Fatalf("s0's batch was let go after %v, want it run on to its answer at 2 s", held)
	}
	after := h2.status()
	m, mb := after.Methods["eth_getBalance"], before.Methods["eth_getBalance"]
	if p, f := m.Primary-mb.Primary, m.Failover-mb.Failover; p != n || f != n {
		t.Errorf("the method's attempts: %d primary, %d failover; want %d and %d (one primary per call)", p, f, n, n)
	}
	byRole := attemptsByRole(h2.scrape(), "eth_getBalance")
	if p, f := byRole["primary"]-metricsBefore["primary"], byRole["failover"]-metricsBefore["failover"]; p != n || f != n {
		t.Errorf("rpcdash_attempts_total: %v primary, %v failover; want %d and %d", p, f, n, n)
	}
	if l := m.Losers - mb.Losers; l != n {
		t.Errorf("the method's losers: %d, want s0's batch's %d calls", l, n)
	}
	var s0, s0b engine.AccountSnapshot
	for i, ep := range after.Endpoints {
		if ep.Name == "s0" {
			s0, s0b = ep.Accounting, before.Endpoints[i].Accounting
		}
	}
	low, high := held*9/10-10*time.Millisecond, held*11/10+10*time.Millisecond
	for what, got := range map[string]time.Duration{"eth_getBalance": m.LoserTime - mb.LoserTime, "s0": s0.LoserTime - s0b.LoserTime} {
		if got < low || got > high {
			t.Errorf("%s: loser upstream time %v, want the %v s0 held the one upstream batch", what, got, held)
		}
	}
	// s0 answered its batch: slow, not failed. The next batch may go to it.
	r = h2.post(balanceBatch(n, strconv.Itoa))
	decodeBatch(t, r, n)
	if batches.Load() != 2 {
		t.Errorf("s0 was sent %d upstream batches after it answered one 2 s late, want 2: a slow batch is no failure", batches.Load())
	}
}

// The last endpoint's upstream batch is never cut: it runs on to the calls'
// own deadline. A batch slower than its deadline (here 2 × 250 ms) on the
// only endpoint was cut and each call sent again alone: 1.57 s and 21
// calls upstream for a batch of 10 that took 1.04 s sent to it directly,
// and the endpoint sent no batch for breaker.cooldown after. Now the batch
// is one upstream request, answered when the endpoint answers, and the
// next batch goes upstream as a batch too.
func TestBatch_TheLastEndpointsUpstreamBatchIsNeverCut(t *testing.T) {
	sims := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	var singles, batches atomic.Int64
	front := frontOf(t, sims.sims[0], func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		batches.Add(1)
		return holdFor(r, 800*time.Millisecond) // else its answer, 800 ms late
	}, &singles)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "only", URL: front.URL}}
		c.Hedge.Enabled = false
	})
	for i := range 20 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	want := balancesOf(t, sims.sims[0].URL(), 10)
	singlesBefore := singles.Load()
	for round := 1; round <= 2; round++ {
		r := h.post(balanceBatch(10, strconv.Itoa))
		for i, a := range decodeBatch(t, r, 10) {
			if a.Result != want[i] {
				t.Fatalf("batch %d, answer %d: %+v, want %q", round, i, a, want[i])
			}
		}
		if r.took < 800*time.Millisecond || r.took > 1500*time.Millisecond || r.attempts != 10 {
			t.Errorf("batch %d: took %v with %d attempts; want the endpoint's one answer after 800 ms, 10 attempts (one per call)", round, r.took, r.attempts)
		}
		if b, n := batches.Load(), singles.Load()-singlesBefore; b != int64(round) || n != 0 {
			t.Errorf("after batch %d the endpoint heard %d upstream batches and %d single calls; want %d and 0", round, b, n, round)
		}
	}
}

// A batch no endpoint took whole goes out again in batches of 100: each
// call's attempt there is sent after one failed, a failover, as is a
// call's attempt on its own after its upstream batch failed. s0 answers
// any batch over 100 calls "batch too large"; a client batch of 300 went
// out as one batch of 300 and then three of 100, and counted 600 primary
// attempts and no failover for 300 calls.
func TestBatch_ABatchSentAgainInHundredsCountsFailovers(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	var seen batchSizes
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if seen.add(body) <= 100 {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"batch too large"}}]`)
		return true
	}, nil)
	h2 := newHarness(t, func(c *engine.Config) { c.Endpoints[0].URL = front.URL }, sim.Config{})
	const n = 300
	before, metricsBefore := h2.status(), attemptsByRole(h2.scrape(), "eth_getBalance")
	r := h2.post(balanceBatch(n, strconv.Itoa))
	decodeBatch(t, r, n)
	if sizes := seen.since(0); fmt.Sprint(sizes) != fmt.Sprint([]int{300, 100, 100, 100}) {
		t.Fatalf("s0 was sent upstream batches of %v calls, want [300 100 100 100]: not the case under test", sizes)
	}
	if r.attempts != 2*n {
		t.Errorf("X-Rpcdash-Attempts %d, want %d", r.attempts, 2*n)
	}
	after := h2.status()
	m, mb := after.Methods["eth_getBalance"], before.Methods["eth_getBalance"]
	if p, f := m.Primary-mb.Primary, m.Failover-mb.Failover; p != n || f != n {
		t.Errorf("the method's attempts: %d primary, %d failover; want %d and %d", p, f, n, n)
	}
	if a, b := after.Endpoints[0].Accounting, before.Endpoints[0].Accounting; a.Primary-b.Primary != n || a.Failover-b.Failover != n {
		t.Errorf("s0's attempts: %d primary, %d failover; want %d and %d", a.Primary-b.Primary, a.Failover-b.Failover, n, n)
	}
	byRole := attemptsByRole(h2.scrape(), "eth_getBalance")
	if p, f := byRole["primary"]-metricsBefore["primary"], byRole["failover"]-metricsBefore["failover"]; p != n || f != n {
		t.Errorf("rpcdash_attempts_total: %v primary, %v failover; want %d and %d", p, f, n, n)
	}
	var got []string
	for _, a := range h2.settledTrace(strings.Split(r.id, ",")[0]).Attempts {
		got = append(got, fmt.Sprintf("%s %s %s won=%v", a.Endpoint, a.Role, a.Outcome, a.Won))
	}
	if want := "[s0 primary invalid won=false s0 failover answer won=true]"; fmt.Sprint(got) != want {
		t.Errorf("the first element's trace: %v, want %s", got, want)
	}
}

// An upstream batch's own deadline learns from the batches that ran past
// it and answered, as a read's attempt deadline learns from its answers:
// with every endpoint answering batches 200 ms late against a deadline of
// 100 ms (twice the single calls' floor, here 50 ms), the first batches
// are raced, each sent twice; once the endpoint has answered enough of
// them, its batches' round trips set the deadline, and a batch goes out
// once. Without it every batch was sent twice for as long as the pool
// stayed slow.
func TestBatch_AnUpstreamBatchsDeadlineLearnsFromItsLateAnswers(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	var batches atomic.Int64
	slow := func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		batches.Add(1)
		return holdFor(r, 200*time.Millisecond) // else its answer, 200 ms late
	}
	front0, front1 := frontOf(t, h.sims[0], slow, nil), frontOf(t, h.sims[1], slow, nil)
	h2 := frontedPair(t, front0.URL, front1.URL, func(c *engine.Config) {
		c.Hedge.Enabled = false
		c.Breaker.AttemptTimeoutMin = 50 * time.Millisecond
	})
	var sent []int64
	for range 10 {
		before := batches.Load()
		r := h2.post(balanceBatch(10, strconv.Itoa))
		for i, a := range decodeBatch(t, r, 10) {
			if a.Error != nil || a.Result == "" {
				t.Fatalf("element %d: %+v", i, a.Error)
			}
		}
		h2.settledTrace(strings.Split(r.id, ",")[0]) // a raced batch's loser has ended
		sent = append(sent, batches.Load()-before)
	}
	for _, ep := range h2.status().Endpoints {
		t.Logf("%s: batch pace %v over %d round trips", ep.Name, ep.BatchPace, ep.BatchRoundTrips)
	}
	t.Logf("upstream batches per client batch: %v", sent)
	if sent[0] != 2 {
		t.Errorf("upstream batches per client batch %v: the first was sent %d times, want 2 (raced at its 100 ms deadline)", sent, sent[0])
	}
	for _, n := range sent[7:] {
		if n != 1 {
			t.Errorf("upstream batches per client batch %v: want the last ones sent once, the deadline learnt from the 200 ms answers", sent)
			break
		}
	}
}

// A hang is still a hang: the only endpoint's upstream batch that passes
// its own deadline and then its calls' deadline unanswered hung on the
// batch, and the endpoint takes no upstream batch for breaker.cooldown
// (its single calls it answers at once): the next client batch goes out
// call by call and is answered. The first is answered with the request's
// timeout, as a client of the endpoint sending it directly would wait on.
func TestBatch_TheLastEndpointHangingOnABatchTakesNoMoreForAWhile(t *testing.T) {
	sims := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	var batches, singles atomic.Int64
	front := frontOf(t, sims.sims[0], func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		batches.Add(1)
		holdFor(r, 30*time.Second) // until rpcdash lets go
		return true
	}, &singles)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "only", URL: front.URL}}
		c.Hedge.Enabled = false
		c.Server.RequestTimeout = time.Second
	})
	for i := range 20 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	r := h.post(balanceBatch(10, strconv.Itoa))
	for i, a := range decodeBatch(t, r, 10) {
		if a.Error == nil {
			t.Fatalf("element %d of the hung batch answered %q, want the request's timeout", i, a.Result)
		}
	}
	if r.took < time.Second || batches.Load() != 1 {
		t.Fatalf("the hung batch was answered after %v, %d upstream batches; want one, held to the request's 1 s deadline", r.took, batches.Load())
	}
	before := singles.Load()
	want := balancesOf(t, sims.sims[0].URL(), 10)
	r = h.post(balanceBatch(10, strconv.Itoa))
	for i, a := range decodeBatch(t, r, 10) {
		if a.Result != want[i] {
			t.Fatalf("next batch, element %d: %+v, want %q", i, a, want[i])
		}
	}
	if b, s := batches.Load(), singles.Load()-before; b != 1 || s != 10 || r.took > 500*time.Millisecond {
		t.Errorf("the next batch: %d upstream batches in all, %d single calls, %v; want none more, its 10 calls alone, at once", b, s, r.took)
	}
}
