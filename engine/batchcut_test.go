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

// An upstream batch cut at its own deadline (twice its attempt deadline,
// here 2 × 250 ms) is thrown away and its calls are sent again, one by
// one: their attempts are failovers (an attempt sent after one failed,
// never the request's first), and the cut batch is a loser for each of
// its calls, its upstream time counted once. They were counted as second
// primaries, no failover and no loser: with --batch 5 and hedging off,
// rpcdash bench read failovers 0 and wasted 0 where the sims saw 510
// calls for 500 and 10 cancelled after 1.34 s. s0 holds every upstream
// batch (its single calls it answers at once); hedging is off, so the
// batch waits for its deadline.
func TestBatch_ACutUpstreamBatchIsALoserAndItsCallsSentAgainAreFailovers(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	var heldNanos atomic.Int64
	front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		start := time.Now()
		if holdFor(r, 5*time.Second) {
			heldNanos.Store(int64(time.Since(start)))
		}
		return true
	}, nil)
	h2 := frontedPair(t, front.URL, h.sims[1].URL(), func(c *engine.Config) { c.Hedge.Enabled = false })
	const n = 10
	want := balancesOf(t, h.sims[1].URL(), n)
	before, metricsBefore := h2.status(), attemptsByRole(h2.scrape(), "eth_getBalance")
	r := h2.post(balanceBatch(n, strconv.Itoa))
	for i, a := range decodeBatch(t, r, n) {
		if a.Result != want[i] {
			t.Fatalf("answer %d: %q, want %q", i, a.Result, want[i])
		}
	}
	held := time.Duration(heldNanos.Load())
	if held == 0 {
		t.Fatal("s0 was sent no upstream batch that was cut: not the case under test")
	}
	if r.attempts != 2*n {
		t.Errorf("X-Rpcdash-Attempts %d, want %d: each call once in the batch and once alone", r.attempts, 2*n)
	}
	// The cut batch is counted as a loser once it is cut, before the calls
	// are answered: no wait is needed.
	after := h2.status()
	m, mb := after.Methods["eth_getBalance"], before.Methods["eth_getBalance"]
	if p, f := m.Primary-mb.Primary, m.Failover-mb.Failover; p != n || f != n {
		t.Errorf("the method's attempts: %d primary, %d failover; want %d and %d (one primary per call)", p, f, n, n)
	}
	if l := m.Losers - mb.Losers; l != n {
		t.Errorf("the method's cancelled losers: %d, want the cut batch's %d calls", l, n)
	}
	var s0, s0b engine.AccountSnapshot
	for i, ep := range after.Endpoints {
		if ep.Name == "s0" {
			s0, s0b = ep.Accounting, before.Endpoints[i].Accounting
		}
	}
	if l := s0.Losers - s0b.Losers; l != n {
		t.Errorf("s0's cancelled losers: %d, want the cut batch's %d calls", l, n)
	}
	if s0.MeanRelease <= 0 || s0.MeanRelease > held {
		t.Errorf("s0's mean cancel → release %v: want the time from the batch's cut to its release, above 0", s0.MeanRelease)
	}
	low, high := held*9/10-10*time.Millisecond, held*11/10+10*time.Millisecond
	for what, got := range map[string]time.Duration{"eth_getBalance": m.LoserTime - mb.LoserTime, "s0": s0.LoserTime - s0b.LoserTime} {
		if got < low || got > high {
			t.Errorf("%s: loser upstream time %v, want the %v s0 held the one upstream batch", what, got, held)
		}
	}
	byRole := attemptsByRole(h2.scrape(), "eth_getBalance")
	if p, f := byRole["primary"]-metricsBefore["primary"], byRole["failover"]-metricsBefore["failover"]; p != n || f != n {
		t.Errorf("rpcdash_attempts_total: %v primary, %v failover; want %d and %d", p, f, n, n)
	}
	tr := h2.settledTrace(strings.Split(r.id, ",")[0])
	var got []string
	for _, a := range tr.Attempts {
		got = append(got, fmt.Sprintf("%s %s %s won=%v", a.Endpoint, a.Role, a.Outcome, a.Won))
	}
	if len(got) != 2 || got[0] != "s0 primary timeout won=false" || !strings.HasSuffix(got[1], " failover answer won=true") {
		t.Errorf("the first element's trace: %v, want [s0 primary timeout won=false, <endpoint> failover answer won=true]", got)
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
