package engine_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// burst sends n reads at once and returns which endpoint answered each.
func burst(t *testing.T, h *harness, first, n int) []reply {
	t.Helper()
	out := make([]reply, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i] = h.call(first+i, "eth_getBalance", addr, "latest") })
	}
	wg.Wait()
	for _, r := range out {
		mustOK(t, r)
	}
	return out
}

// lateBursts sends bursts of n reads at once, one after the other, and
// returns the replies of the later half, once the router has seen the
// earlier ones answered.
func lateBursts(t *testing.T, h *harness, bursts, n int) []reply {
	t.Helper()
	_, late := provenAndLate(burstsInTurn(t, h, bursts, n))
	return late
}

// burstsInTurn sends bursts of n reads at once, one after the other, and
// returns each burst's replies.
func burstsInTurn(t *testing.T, h *harness, bursts, n int) [][]reply {
	t.Helper()
	out := make([][]reply, bursts)
	for b := range bursts {
		out[b] = burst(t, h, 100+b*n, n)
	}
	return out
}

// provenAndLate splits bursts' replies: those after the first two (which
// prove the leader's concurrency), and the later half, which is judged.
func provenAndLate(bursts [][]reply) (proven, late []reply) {
	for b, rs := range bursts {
		if b >= 2 {
			proven = append(proven, rs...)
		}
		if b >= len(bursts)/2 {
			late = append(late, rs...)
		}
	}
	return proven, late
}

// slowestOn is the longest any of rs answered by name took.
func slowestOn(rs []reply, name string) time.Duration {
	var most time.Duration
	for _, r := range rs {
		if r.endpoint == name {
			most = max(most, r.took)
		}
	}
	return most
}

func answeredBy(rs []reply, name string) int {
	n := 0
	for _, r := range rs {
		if r.endpoint == name {
			n++
		}
	}
	return n
}

// A provider serves many requests at once at its pace: 20 parallel reads
// (a page load) stay on the endpoint three times faster instead of
// spilling onto the slower one from the third on, as the load factor
// 1 + in_flight had them (a page of 20 reads took 121 ms through rpcdash
// against 32 ms sent to the fastest endpoint directly).
func TestRouter_ParallelReadsStayOnAnEndpointThatAnswersThemAtOnce(t *testing.T) {
	t.Parallel()
	const n = 20
	// As in the turns test below, a try in which s1 took reads while this
	// process stalled 50 ms or more runs again (the third is judged
	// whatever the stall): a loaded machine may slow s0's answers at 20 at
	// once past its proof, and the burst rightly spills (beside a busy
	// loop and the whole suite: 73 of 80 to s0).
	untilJudged(t, func(try int) string {
		h := newHarness(t, nil, sim.Config{Latency: fixed(100 * time.Millisecond)}, sim.Config{Latency: fixed(300 * time.Millisecond)})
		measureBoth(t, h)
		w := testutil.WatchStalls(t)
		all := burstsInTurn(t, h, 8, n)
		stall := w.Stop()
		proven, late := provenAndLate(all)
		on := answeredBy(late, "s0")
		// The same stall that spills a burst slows s0's answers at 20 at
		// once past its proof, which then falls back (seen once in CI: 1
		// after the bursts, s0 having answered nearly all of them). So
		// does a machine too busy to answer 20 at once at s0's pace
		// without a stall of 50 ms (fresh-clone CI, and four test
		// processes at once on two cores: 73 of 80, stall 19.5 ms): an
		// answer of s0's 1.5 times its 100 ms shows it.
		c := h.endpoint("s0").Score.Concurrency
		slowest := slowestOn(proven, "s0")
		if (on < len(late)*95/100 || c < n*3/4) && (stall >= 50*time.Millisecond || slowest >= 150*time.Millisecond) && try < 3 {
			return fmt.Sprintf("s0 answered %d of the last %d reads, its proven concurrency %d, while this process stalled %v and s0's slowest answer took %v", on, len(late), c, stall, slowest)
		}
		if on < len(late)*95/100 {
			t.Errorf("s0 (100 ms, serving all at once) answered %d of the last %d parallel reads, want nearly all: s1 is three times slower; longest stall of this process %v, s0's slowest answer %v", on, len(late), stall, slowest)
		}
		if c < n*3/4 {
			t.Errorf("s0's proven concurrency %d after bursts of %d answered at its pace, want about %d; longest stall of this process %v", c, n, n, stall)
		}
		return ""
	})
}

// An endpoint that answers parallel reads at once is no equal of a slower
// one by its load alone: with 17 to 19 of a page of 20 in flight, a 28 ms
// leader's cost came within router.tolerance of an idle 65 ms endpoint's,
// and the two took turns (seeds audit G1: 1 to 2 % of a page's reads on
// the 60 ms sim, a page's p95 69-75 ms against 38 direct). Equals must be
// equal at rest too.
func TestRouter_ParallelReadsTakeNoTurnsWithAnEndpointEqualByLoadAlone(t *testing.T) {
	t.Parallel()
	// A loaded machine may slow s0's answers or its proof until its cost
	// with 19 in flight truly passes s1's: such a try is void.
	untilJudged(t, func(try int) string {
		// A wide tolerance, so that s0's cost with 12 or more in flight
		// comes within it, and s1 well dearer than s0's with 19: a loaded
		// machine's noise in the figures (12 % at 100 ms) decides nothing.
		h := newHarness(t, func(c *engine.Config) { c.Router.ExploreAfter, c.Router.Tolerance = time.Hour, 0.75 },
			sim.Config{Latency: fixed(100 * time.Millisecond)}, sim.Config{Latency: fixed(280 * time.Millisecond)})
		measureBoth(t, h)
		w := testutil.WatchStalls(t)
		all := burstsInTurn(t, h, 8, 20)
		stall := w.Stop()
		proven, late := provenAndLate(all)
		slowest := slowestOn(proven, "s0")
		s0, s1 := h.endpoint("s0").Score, h.endpoint("s1").Score
		most := float64(s0.Latency) * (1 + 19/float64(max(s0.Concurrency, 1)))
		if most >= 0.9*float64(s1.Latency) {
			return fmt.Sprintf("s0 (figure %v, proven %d at once) not clearly cheaper than s1 (%v) with 19 in flight", s0.Latency, s0.Concurrency, s1.Latency)
		}
		on := answeredBy(late, "s1")
		// A loaded machine (this process stalled 50 ms or more) may slow
		// s0's answers at 20 at once past its proof (provenConcurrency), or
		// hold them past twice its figure (silent: concurrencyNow), and the
		// burst's rest then rightly spills; the scores read after the
		// bursts need not show it. Seen once in CI (s59b-2: 10 of 80 reads,
		// s0's figure 109 ms and proof 20 after them). The third try is
		// judged whatever the stall. So may a machine too busy to answer 20
		// at once at s0's pace without such a stall (two test processes at
		// once: 6 of 80, stall 19 ms): an answer of s0's 1.5 times its
		// 100 ms shows it.
		if on > 0 && (stall >= 50*time.Millisecond || slowest >= 150*time.Millisecond) && try < 3 {
			return fmt.Sprintf("s1 answered %d of the last %d reads while this process stalled %v and s0's slowest answer took %v", on, len(late), stall, slowest)
		}
		if on > 0 {
			t.Errorf("s1 (figure %v) answered %d of the last %d parallel reads; s0 (figure %v, proven %d at once) costs at most %v with 19 in flight; longest stall of this process %v, s0's slowest answer %v",
				s1.Latency, on, len(late), s0.Latency, s0.Concurrency, time.Duration(most).Round(time.Millisecond), stall, slowest)
		}
		return ""
	})
}

// An endpoint that serves one request at a time (a node with one worker)
// answers parallel reads ever later: it proves no concurrency, and the
// load factor spreads the burst as before.
func TestRouter_AnEndpointServingOneAtATimeProvesNoConcurrency(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(100 * time.Millisecond)}, sim.Config{Latency: fixed(300 * time.Millisecond)})
	worker, slow := h.sims[0].URL(), h.sims[1].URL()
	var one sync.Mutex
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		one.Lock()
		defer one.Unlock()
		relay(w, worker, body)
	}))
	t.Cleanup(front.Close)
	h = newHarness(t, func(c *engine.Config) { c.Endpoints[0].URL, c.Endpoints[1].URL = front.URL, slow },
		sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	measureBoth(t, h)
	const n = 10
	late := lateBursts(t, h, 6, n)
	if on := answeredBy(late, "s1"); on < len(late)/4 {
		t.Errorf("s1 answered %d of the last %d parallel reads, want a share of them: s0 answers one at a time, the tenth after a second", on, len(late))
	}
	if c := h.endpoint("s0").Score.Concurrency; c > 2 {
		t.Errorf("s0 serves one request at a time, proven concurrency %d", c)
	}
}

// Concurrency proven before counts for nothing while the endpoint has work
// in flight and has said nothing for twice its pace: requests piling up on
// an endpoint that stopped answering drain to the others as before.
func TestRouter_ConcurrencyIsNotCreditedToAnEndpointGoneSilent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(100 * time.Millisecond)}, sim.Config{Latency: fixed(300 * time.Millisecond)})
	measureBoth(t, h)
	for b := range 4 {
		burst(t, h, 100+b*20, 20)
	}
	if c := h.endpoint("s0").Score.Concurrency; c < 15 {
		t.Fatalf("s0's proven concurrency %d after bursts of 20, want about 20", c)
	}
	// Its pace as the router reads it: on a loaded machine above 100 ms
	// (a fixed 250 ms wait was short of twice a figure of 126 ms once).
	pace := h.endpoint("s0").Score.Latency
	hang := "30s"
	if err := h.sims[0].Apply(sim.ControlRequest{ExtraLatency: &hang}); err != nil {
		t.Fatal(err)
	}
	s0 := h.sims[0]
	sent := s0.Counters().Total
	hung := make(chan reply, 1)
	go func() { hung <- h.call(500, "eth_getBalance", addr, "latest") }()
	waitArrivals(t, h.sims[:1], sent+1)
	// Two and a half times its pace without a word, short of the
	// attempt's deadline (three times its p99).
	time.Sleep(pace * 5 / 2)
	if sc := h.endpoint("s0").Score; sc.Concurrency != 1 || sc.LoadFactor < 2 {
		t.Errorf("s0 silent with a read in flight for 2.5× its pace: concurrency %d, load factor %.2f; want 1 and 1 + in flight", sc.Concurrency, sc.LoadFactor)
	}
	before := s0.Counters().Total
	burst(t, h, 600, 10)
	// At 1 + in flight, s0 (100 ms) and s1 (300 ms) share the ten as
	// their costs meet (s0 at 200, 300, 400… ms against s1's 300, 600,
	// 900: about 7 and 3); credited with 20, s0 would take all ten.
	if more := s0.Counters().Total - before; more > 8 {
		t.Errorf("%d of 10 reads sent beside a read s0 had not answered for 2.5× its pace went to s0, want s1 to take some", more)
	}
	mustOK(t, <-hung)
}
