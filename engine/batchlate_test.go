package engine_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// slowFront relays to u; once slowed, it holds upstream batches for batch
// and single calls for single, and counts them.
type slowFront struct {
	srv             *httptest.Server
	slow            atomic.Bool
	batches, single atomic.Int64
}

func newSlowFront(t *testing.T, u *sim.Upstream, batch, single time.Duration) *slowFront {
	f := &slowFront{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hold := time.Duration(0)
		switch {
		case !f.slow.Load():
		case bytes.HasPrefix(body, []byte("[")):
			f.batches.Add(1)
			hold = batch
		default:
			f.single.Add(1)
			hold = single
		}
		if hold > 0 && holdFor(r, hold) {
			return
		}
		relay(w, u.URL(), body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// An upstream batch past its own deadline on the last endpoint runs on
// beside its calls gone alone, and its answer, when it comes first, is
// theirs: the endpoint answers batches 800 ms late and, slowed, single
// calls 3 s late; the batch's deadline is 500 ms. The calls were answered
// only by their own races, at 3 s, the batch's answer at 800 ms learnt
// from and thrown away (with every endpoint slowed past the batch's
// deadline, a batch of 300 reads that one endpoint answered at 8 s failed
// whole at the request's 10 s deadline).
func TestBatch_AnOverdueBatchsLateAnswerAnswersItsCallsStillAlone(t *testing.T) {
	t.Parallel()
	sims := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	f := newSlowFront(t, sims.sims[0], 800*time.Millisecond, 3*time.Second)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "only", URL: f.srv.URL}}
		c.Hedge.Enabled = false
	})
	h.warm(20)
	want := balancesOf(t, sims.sims[0].URL(), 10)
	f.slow.Store(true)
	r := h.post(balanceBatch(10, strconv.Itoa))
	for i, a := range decodeBatch(t, r, 10) {
		if a.Result != want[i] {
			t.Fatalf("answer %d: %+v, want %q", i, a, want[i])
		}
	}
	if r.took < 800*time.Millisecond || r.took > 2*time.Second || f.batches.Load() != 1 || f.single.Load() != 10 || r.attempts != 20 {
		t.Errorf("took %v, %d attempts, %d upstream batches, %d single calls; want the batch's answer at 800 ms, 20 attempts (the batch, and each call alone after its 500 ms deadline)",
			r.took, r.attempts, f.batches.Load(), f.single.Load())
	}
	got := attemptOutcomes(h.settledTrace(strings.Split(r.id, ",")[0]))
	if !strings.HasPrefix(got, "[only primary answer won=true only failover ") || !strings.HasSuffix(got, "won=false]") {
		t.Errorf("the first call's attempts: %v, want the upstream batch's won, its call alone lost", got)
	}
}

// With every endpoint silent since its latest attempt, as in a slowdown of
// the whole pool, a client batch still goes upstream as a batch: every
// endpoint slowed to 1 s, with reads of their own past their deadlines,
// and a batch of 300 reads against a request deadline of 2.5 s. Its calls
// went alone, a hundred at a time, 1 s each, and the last hundred failed
// at 2.5 s; the same batch sent directly was answered at 1 s.
func TestBatch_ABatchGoesUpstreamWholeWhenEveryEndpointIsSilent(t *testing.T) {
	t.Parallel()
	sims := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	var fronts []*slowFront
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = false
		c.Server.RequestTimeout = 2500 * time.Millisecond
		for i := range c.Endpoints {
			f := newSlowFront(t, sims.sims[i], time.Second, time.Second)
			fronts = append(fronts, f)
			c.Endpoints[i].URL = f.srv.URL
		}
	}, sim.Config{}, sim.Config{}, sim.Config{})
	h.warm(30)
	mustOK(t, h.post(balanceBatch(300, strconv.Itoa)))
	for _, f := range fronts {
		f.slow.Store(true)
	}
	// Reads of their own pass their deadlines on every endpoint.
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.call(100+i, "eth_getBalance", addr, "latest")
		}()
	}
	time.Sleep(900 * time.Millisecond)
	batch := balanceBatch(300, strconv.Itoa)
	for _, f := range fronts {
		f.batches.Store(0)
		f.single.Store(0)
	}
	r := h.post(batch)
	wg.Wait()
	errs := 0
	for _, a := range decodeBatch(t, r, 300) {
		if a.Error != nil {
			errs++
		}
	}
	var batches, singles int64
	for _, f := range fronts {
		batches += f.batches.Load()
		singles += f.single.Load()
	}
	if errs != 0 || r.took > 2*time.Second {
		t.Errorf("%d of 300 calls failed, took %v, %d upstream batches, %d single calls; want every call answered by an upstream batch at about 1 s", errs, r.took, batches, singles)
	}
}

// A batch's own deadline is at most half the time its calls have left
// while another endpoint may take it, as a single read's race deadline
// is: learnt from batches answered in 600–700 ms (× factor 3), it was
// about the request's 2 s deadline, and a batch sent to the endpoint that
// then hung was raced too late for the next one's 700 ms (a pool slowed to
// 4 s with one endpoint hung: every call of a batch failed at the 10 s
// request deadline where the others answered in 4 s).
func TestBatch_ABatchIsRacedWithinHalfItsCallsTime(t *testing.T) {
	t.Parallel()
	sims := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	var hung atomic.Bool
	front := func(i int, pace time.Duration) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if bytes.HasPrefix(body, []byte("[")) {
				hold := pace
				if i == 0 && hung.Load() {
					hold = time.Minute
				}
				if holdFor(r, hold) {
					return
				}
			}
			relay(w, sims.sims[i].URL(), body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = false
		c.Server.RequestTimeout = 2 * time.Second
		for i, pace := range []time.Duration{600 * time.Millisecond, 700 * time.Millisecond, 700 * time.Millisecond} {
			c.Endpoints[i].URL = front(i, pace)
		}
	}, sim.Config{}, sim.Config{}, sim.Config{})
	h.warm(30)
	for range 6 {
		r := h.post(balanceBatch(10, strconv.Itoa))
		decodeBatch(t, r, 10)
	}
	hung.Store(true)
	r := h.post(balanceBatch(10, strconv.Itoa))
	errs := 0
	for _, a := range decodeBatch(t, r, 10) {
		if a.Error != nil {
			errs++
		}
	}
	for _, ep := range h.eng.Snapshot().Endpoints {
		t.Logf("%s: batch pace %v over %d", ep.Name, ep.BatchPace, ep.BatchRoundTrips)
	}
	if errs != 0 || r.took > 1900*time.Millisecond {
		t.Errorf("with s0 hung: %d of 10 calls failed, took %v, trace %v; want every call answered by s1's or s2's batch, raced at 1 s at the latest",
			errs, r.took, attemptOutcomes(h.settledTrace(strings.Split(r.id, ",")[0])))
	}
}
