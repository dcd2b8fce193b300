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

// attemptOutcomes is a trace's attempts, each as "endpoint role outcome
// won=…", in a list.
func attemptOutcomes(tr engine.RequestTrace) string {
	var got []string
	for _, a := range tr.Attempts {
		got = append(got, fmt.Sprintf("%s %s %s won=%v", a.Endpoint, a.Role, a.Outcome, a.Won))
	}
	return fmt.Sprint(got)
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
	t.Parallel()
	// A try is void when the batch did not go to s0 first.
	untilJudged(t, func(int) string {
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
			// Unmeasured, the endpoints are ranked by how the warm-up went:
			// on a loaded machine the batch went to s1 first.
			return fmt.Sprintf("s0 was sent %d upstream batches, not the one it holds: the batch went to s1 first", batches.Load())
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
		got := attemptOutcomes(h2.settledTrace(strings.Split(r.id, ",")[0]))
		if got != "[s0 primary answer won=false s1 failover answer won=true]" {
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
		return ""
	})
}

// The last endpoint's upstream batch is never cut. Past its own deadline
// (here 2 × 250 ms) with no endpoint left to race it on, its calls run
// alone and it runs on beside them to its answer, whose round trip sets
// the next batch's deadline. It was cut there, so the next batch was cut
// too: a batch of 10 that the only endpoint, slowed by 1 s, answered in
// 1.04 s sent directly took 1.57 s through rpcdash with 21 calls upstream,
// and the endpoint then took no batch for breaker.cooldown. Here the
// endpoint answers batches 800 ms late and single calls at once: the first
// client batch is answered by its calls alone after 500 ms, and the next
// goes out as one upstream batch, answered in 800 ms.
func TestBatch_TheLastEndpointsOverdueBatchRunsOnBesideItsCallsAlone(t *testing.T) {
	t.Parallel()
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
	check := func(round int, r reply) {
		t.Helper()
		for i, a := range decodeBatch(t, r, 10) {
			if a.Result != want[i] {
				t.Fatalf("batch %d, answer %d: %+v, want %q", round, i, a, want[i])
			}
		}
	}
	singlesBefore := singles.Load()
	r := h.post(balanceBatch(10, strconv.Itoa))
	check(1, r)
	if r.took < 500*time.Millisecond || r.took > 790*time.Millisecond || r.attempts != 20 || singles.Load()-singlesBefore != 10 {
		t.Errorf("batch 1: took %v with %d attempts, %d single calls upstream; want its calls alone after the 500 ms deadline: 20 attempts, 10 single calls", r.took, r.attempts, singles.Load()-singlesBefore)
	}
	got := attemptOutcomes(h.settledTrace(strings.Split(r.id, ",")[0]))
	if got != "[only primary answer won=false only failover answer won=true]" {
		t.Errorf("batch 1's first call: %v, want [only primary answer won=false only failover answer won=true]: the upstream batch ran on to its answer", got)
	}
	singlesBefore = singles.Load()
	r = h.post(balanceBatch(10, strconv.Itoa))
	check(2, r)
	if r.took < 800*time.Millisecond || r.took > 1500*time.Millisecond || r.attempts != 10 || batches.Load() != 2 || singles.Load() != singlesBefore {
		t.Errorf("batch 2: took %v with %d attempts, %d upstream batches in all, %d single calls; want one upstream batch answered after 800 ms (its deadline learnt from the first), 10 attempts, no single call", r.took, r.attempts, batches.Load(), singles.Load()-singlesBefore)
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
	t.Parallel()
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

// A hang is still a hang: the only endpoint holds upstream batches and
// answers single calls at once. Past the batch's own deadline its calls
// run alone and are answered; the batch runs on, and unanswered at the
// calls' deadline it hung: the endpoint takes no upstream batch for
// breaker.cooldown, and the next client batch goes out call by call, at
// once.
func TestBatch_TheLastEndpointHangingOnABatchTakesNoMoreForAWhile(t *testing.T) {
	t.Parallel()
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
	want := balancesOf(t, sims.sims[0].URL(), 10)
	r := h.post(balanceBatch(10, strconv.Itoa))
	for i, a := range decodeBatch(t, r, 10) {
		if a.Result != want[i] {
			t.Fatalf("element %d of the batch the endpoint holds: %+v, want %q from its call alone", i, a, want[i])
		}
	}
	if r.took < 500*time.Millisecond || r.took > 900*time.Millisecond || batches.Load() != 1 {
		t.Fatalf("the held batch was answered after %v, %d upstream batches; want its calls alone after its 500 ms deadline, one upstream batch", r.took, batches.Load())
	}
	tr := h.settledTrace(strings.Split(r.id, ",")[0]) // the held batch has met the calls' deadline
	if a := tr.Attempts[0]; a.Outcome != "timeout" {
		t.Fatalf("the held batch's attempt ended %q, want timeout at the calls' deadline", a.Outcome)
	}
	before := singles.Load()
	r = h.post(balanceBatch(10, strconv.Itoa))
	for i, a := range decodeBatch(t, r, 10) {
		if a.Result != want[i] {
			t.Fatalf("next batch, element %d: %+v, want %q", i, a, want[i])
		}
	}
	if b, s := batches.Load(), singles.Load()-before; b != 1 || s != 10 || r.took > 400*time.Millisecond {
		t.Errorf("the next batch: %d upstream batches in all, %d single calls, %v; want none more, its 10 calls alone, at once", b, s, r.took)
	}
}

// A race on waits for its first answer: with the batch on every endpoint,
// the newest try's deadline passing sends no call alone. Both endpoints
// here answer 300 ms late (batches and single calls alike) against a batch
// deadline of 100 ms (twice the single calls' floor, here 50 ms): s0's
// batch is raced on s1 at 100 ms, s1's deadline passes at 200 ms with no
// endpoint left, and s0's answer comes at 300 ms. Its calls were sent
// alone at 200 ms, to answer at 500 ms, the batches running on unused (a
// pool slowed by 1 s: 2.06 s against 1.04 s sent directly).
func TestBatch_ARaceOnEveryEndpointWaitsForItsFirstAnswer(t *testing.T) {
	r, _, requests := slowPairBatch(t, 0, 300*time.Millisecond)
	for i, a := range decodeBatch(t, r, 10) {
		if a.Error != nil || a.Result == "" {
			t.Fatalf("element %d: %+v", i, a.Error)
		}
	}
	if r.took < 300*time.Millisecond || r.took > 450*time.Millisecond || r.attempts != 20 || requests != 2 {
		t.Errorf("the batch took %v with %d attempts, %d upstream requests; want the first batch's answer at 300 ms, 20 attempts (a batch on each endpoint), 2 requests (no call alone)", r.took, r.attempts, requests)
	}
}

// A batch whose calls' deadline passes while every endpoint holds its
// upstream batch fails, as a direct client's would; its calls are not then
// sent alone with no time left: they went out in the two upstream batches
// and nowhere else (their X-Rpcdash-Attempts and traces count 2, not 3).
func TestBatch_CallsWhoseDeadlinePassedInTheirBatchAreNotSentAgain(t *testing.T) {
	r, tr, requests := slowPairBatch(t, 400*time.Millisecond, 2*time.Second)
	for i, a := range decodeBatch(t, r, 10) {
		if a.Error == nil || !strings.Contains(a.Error.Message, "request timed out: no answer within server.request_timeout 400ms (sent in an upstream batch to s0, s1)") {
			t.Fatalf("element %d: %+v, want a timeout naming both endpoints", i, a.Error)
		}
	}
	if r.attempts != 20 || requests != 2 || len(tr.Attempts) != 2 {
		t.Errorf("%d attempts, %d upstream requests, trace %s; want 20 attempts (a batch on each endpoint), 2 requests, 2 traced", r.attempts, requests, attemptOutcomes(tr))
	}
}

// slowPairBatch sends a batch of 10 reads to two endpoints (hedging off,
// attempt deadlines from 50 ms, server.request_timeout requestTimeout
// unless 0) warmed, then both slowed by extra; it returns the reply, its
// first call's settled trace and the upstream requests the batch made.
func slowPairBatch(t *testing.T, requestTimeout, extra time.Duration) (reply, engine.RequestTrace, int64) {
	t.Helper()
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = false
		c.Breaker.AttemptTimeoutMin = 50 * time.Millisecond
		if requestTimeout > 0 {
			c.Server.RequestTimeout = requestTimeout
		}
	}, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	h.warm(20)
	before := []sim.Counters{h.sims[0].Counters(), h.sims[1].Counters()}
	for _, s := range h.sims {
		s.SetExtraLatency(extra)
	}
	r := h.post(balanceBatch(10, strconv.Itoa))
	tr := h.settledTrace(strings.Split(r.id, ",")[0])
	var requests int64
	for i, s := range h.sims {
		requests += s.Counters().HTTP - before[i].HTTP
	}
	return r, tr, requests
}
