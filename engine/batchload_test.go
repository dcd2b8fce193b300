package engine_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An upstream batch in flight is one request to its endpoint in the
// router's load, however many calls it carries: counted by calls, a batch
// of 50 held at the faster endpoint made it cost 51 times its latency, and
// the next batch went to the slower one (a steady 40 ms sim beside a 250 ms
// one, ten 50-call batches a second: p99 368 ms through rpcdash, 62 ms
// sent to the steady sim directly).
func TestBatch_AnUpstreamBatchInFlightIsOneRequestOfLoad(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	held, release := make(chan struct{}), make(chan struct{})
	releaseAll := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseAll)
	var batches atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.HasPrefix(body, []byte("[")) && batches.Add(1) == 1 {
			close(held)
			<-release // the first batch waits; the others pass
		}
		relay(w, h.sims[0].URL(), body)
	}))
	t.Cleanup(front.Close)
	// s0 (1 ms, in front) and s1 (20 ms), hedging off: routing alone.
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), func(c *engine.Config) { c.Hedge.MaxExtra = 0 })
	const n = 50
	first := make(chan reply, 1)
	go func() { first <- h2.post(balanceBatch(n, strconv.Itoa)) }()
	select { // a batch routed elsewhere must fail the test, not hang it
	case <-held:
	case r := <-first:
		t.Fatalf("the first batch was answered by %q (HTTP %d) without being held at s0: the warm-up left s0 (1 ms) not the first choice", r.endpoint, r.status)
	case <-time.After(10 * time.Second):
		t.Fatal("the first batch did not reach s0 in 10 s")
	}
	if in := h2.endpoint("s0").Score.InFlight; in != 1 {
		t.Errorf("s0's load with one upstream batch of %d calls in flight: in_flight %d, want 1", n, in)
	}
	second := h2.post(balanceBatch(n, func(i int) string { return strconv.Itoa(1000 + i) }))
	releaseAll()
	if second.status != http.StatusOK || second.endpoint != "s0" {
		t.Errorf("the second batch, sent while the first was in flight at s0: HTTP %d, answered by %q; want s0 (1 ms, one request in flight) over s1 (20 ms, idle)", second.status, second.endpoint)
	}
	if r := <-first; r.status != http.StatusOK || r.endpoint != "s0" {
		t.Errorf("the first batch: HTTP %d, answered by %q, want s0", r.status, r.endpoint)
	}
}

// A client that sends only batches gives the ranking no latency figure (its
// figures are single calls' and probes'): the endpoints of an upstream
// batch are ordered by their batches' own round trips once each has
// answered a few, and then the faster one takes them all.
func TestBatch_BatchesGoToTheEndpointThatAnswersBatchesFaster(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(20 * time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	const learn, judged, n = 20, 20, 20
	var took []string
	for b := range learn + judged {
		r := h.post(balanceBatch(n, func(i int) string { return strconv.Itoa(b*n + i) }))
		if r.status != http.StatusOK {
			t.Fatalf("batch %d: HTTP %d", b, r.status)
		}
		took = append(took, r.endpoint)
	}
	t.Logf("answered by, in order: %v", took)
	for b, ep := range took[learn:] {
		if ep != "s1" {
			t.Errorf("batch %d after %d to learn from went to %q, want s1 (1 ms; s0 answers in 20 ms)", learn+b, learn, ep)
		}
	}
	if slow := slices.Index(took, "s0"); slow < 0 {
		t.Errorf("s0 took no batch: nothing to learn its pace from (the test learns nothing)")
	}
	// The status says each one's pace: s1's a few ms, s0's at least its 20.
	slow, fast := h.endpoint("s0"), h.endpoint("s1")
	if slow.BatchRoundTrips < 5 || fast.BatchRoundTrips < learn/2 || slow.BatchPace < 20*time.Millisecond || fast.BatchPace >= slow.BatchPace {
		t.Errorf("batch pace: s0 %s of %d round trips, s1 %s of %d", slow.BatchPace, slow.BatchRoundTrips, fast.BatchPace, fast.BatchRoundTrips)
	}
	st := h.status()
	var wire struct {
		Endpoints []struct {
			Name            string  `json:"name"`
			BatchPaceMS     float64 `json:"batch_pace_ms"`
			BatchRoundTrips int64   `json:"batch_round_trips"`
		} `json:"endpoints"`
	}
	code, body := h.adminDo("GET", "/v1/status", "")
	if err := json.Unmarshal(body, &wire); code != http.StatusOK || err != nil || len(wire.Endpoints) != len(st.Endpoints) {
		t.Fatalf("status: HTTP %d, %v", code, err)
	}
	for _, w := range wire.Endpoints {
		if ep := h.endpoint(w.Name); w.BatchRoundTrips != ep.BatchRoundTrips || w.BatchPaceMS < 1 {
			t.Errorf("%s in /v1/status: batch_pace_ms %v, batch_round_trips %d (snapshot %s, %d)", w.Name, w.BatchPaceMS, w.BatchRoundTrips, ep.BatchPace, ep.BatchRoundTrips)
		}
	}
}
