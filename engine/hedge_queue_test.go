package engine_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// background keeps workers sending reads to the harness until the returned
// stop is called (more than once is fine); stop returns how many were
// sent and how many got no result.
func background(h *harness, workers int) (stop func() (sent, failed int64)) {
	var wg sync.WaitGroup
	var sent, failed atomic.Int64
	quit := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-quit:
					return
				default:
				}
				body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(w*1_000_000+i) + `,"method":"eth_getBalance","params":["` + addr + `","latest"]}`
				resp, err := h.client.Post(h.rpc, "application/json", strings.NewReader(body))
				sent.Add(1)
				if err != nil {
					failed.Add(1)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"result"`)) {
					failed.Add(1)
				}
			}
		}()
	}
	var once sync.Once
	return func() (int64, int64) {
		once.Do(func() { close(quit) })
		wg.Wait()
		return sent.Load(), failed.Load()
	}
}

func hedgingOn(c *engine.Config) { c.Hedge.Enabled = true }

// pacedPool is three 20 ms endpoints, hedging on, under 8 readers
// (background), once each endpoint's base pace is set (waitForBases);
// stop ends the readers (also at the test's end).
func pacedPool(t *testing.T) (*harness, func() (sent, failed int64)) {
	t.Helper()
	h := newHarness(t, hedgingOn, sim.Config{Latency: fixed(20 * time.Millisecond)},
		sim.Config{Latency: fixed(20 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	stop := background(h, 8)
	t.Cleanup(func() { stop() })
	waitForBases(t, h)
	return h, stop
}

// waitForBases waits (at most 10 s) until every endpoint has had 60 attempts:
// enough answers in the last 2 s for each to set its base.
func waitForBases(t *testing.T, h *harness) {
	t.Helper()
	waitHedge(t, h, 10*time.Second, func(engine.HedgeStatus) bool {
		for _, ep := range h.status().Endpoints {
			if ep.Rates.Attempts < 60 {
				return false
			}
		}
		return true
	})
}

// waitHedge polls the status until cond holds of its hedging, for at most d.
func waitHedge(t *testing.T, h *harness, d time.Duration, cond func(engine.HedgeStatus) bool) engine.Snapshot {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := h.status()
		if cond(s.Hedge) || time.Now().After(deadline) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// When every endpoint turns ten times slower at once, as endpoints pushed
// to their capacity do, a hedge only joins another queue, and its load is
// what pushes them past capacity. Hedging pauses, naming the endpoints and
// their medians, fires nothing while paused, and resumes once they answer
// at their usual pace again, with no client error throughout.
func TestHedge_PausesWhileMostEndpointsQueueAndResumesAfter(t *testing.T) {
	t.Parallel()
	h, stop := pacedPool(t)
	if s := h.status(); s.Hedge.Paused {
		t.Fatalf("hedging paused at the endpoints' usual pace: %s", s.Hedge.PauseReason)
	}
	for _, u := range h.sims {
		setMode(t, u, sim.ControlRequest{ExtraLatency: ptr("200ms")})
	}
	s := waitHedge(t, h, 10*time.Second, func(hs engine.HedgeStatus) bool { return hs.Paused })
	if !s.Hedge.Paused || !strings.Contains(s.Hedge.PauseReason, "their best recent median") {
		t.Fatalf("every endpoint 10× slower: hedging paused %v (%q)", s.Hedge.Paused, s.Hedge.PauseReason)
	}
	t.Logf("paused: %s", s.Hedge.PauseReason)
	logEvents := func() {
		for _, ev := range h.events() {
			t.Logf("%s %s %s %s", ev.Time.Format("05.000"), ev.Type, ev.Endpoint, ev.Message)
		}
	}
	// A hedge let through just before the pause is counted once it is
	// launched, which a loaded machine may delay past the status read.
	time.Sleep(200 * time.Millisecond)
	if s = h.status(); !s.Hedge.Paused {
		logEvents()
		t.Fatal("hedging resumed within 200 ms of pausing, every endpoint still 10× slower")
	}
	fired := s.Methods["eth_getBalance"].HedgesFired
	time.Sleep(time.Second) // a second of reads, every one due a hedge at the 20 ms delay
	s = h.status()
	if m := s.Methods["eth_getBalance"]; s.Hedge.Paused && m.HedgesFired != fired {
		logEvents()
		t.Fatalf("%d hedges fired while paused", m.HedgesFired-fired)
	}
	for _, u := range h.sims {
		setMode(t, u, sim.ControlRequest{ExtraLatency: ptr("0s")})
	}
	s = waitHedge(t, h, 10*time.Second, func(hs engine.HedgeStatus) bool { return !hs.Paused })
	if s.Hedge.Paused {
		t.Fatalf("endpoints back at 20 ms: hedging still paused (%q)", s.Hedge.PauseReason)
	}
	if sent, failed := stop(); failed != 0 {
		t.Fatalf("%d of %d reads failed", failed, sent)
	}
	var paused, resumed bool
	for _, ev := range h.events() {
		paused = paused || ev.Type == engine.EventHedge && ev.To == "paused" && strings.Contains(ev.Message, "a duplicate would queue")
		resumed = resumed || paused && ev.Type == engine.EventHedge && ev.To == "active"
	}
	if !paused || !resumed {
		t.Fatalf("events: paused %v, resumed %v", paused, resumed)
	}
}

// Slowness that is each endpoint's own is what hedging is for: answers in
// a tail (3 % of them 10× slower, each endpoint on its own), and then
// one endpoint 10× slower on everything, pause nothing, and hedges go on
// firing.
func TestHedge_SlownessOfEndpointsOnTheirOwnDoesNotPauseHedging(t *testing.T) {
	tail := sim.Config{Latency: sim.Latency{Median: 20 * time.Millisecond, TailProb: 0.03, TailMin: 200 * time.Millisecond, TailMax: 300 * time.Millisecond}}
	h := newHarness(t, hedgingOn, tail, tail, tail)
	stop := background(h, 8)
	defer stop()
	waitForBases(t, h)
	setMode(t, h.sims[0], sim.ControlRequest{ExtraLatency: ptr("200ms")})
	fired := h.status().Methods["eth_getBalance"].HedgesFired
	time.Sleep(3 * time.Second)
	s := h.status()
	if s.Hedge.Paused {
		t.Fatalf("endpoints slow on their own paused hedging: %s", s.Hedge.PauseReason)
	}
	if m := s.Methods["eth_getBalance"]; m.HedgesFired == fired {
		t.Fatal("no hedge fired in 3 s of reads with 3 % tails")
	}
	for _, ev := range h.events() {
		if ev.Type == engine.EventHedge && ev.To == "paused" {
			t.Fatalf("hedging paused at some point: %s", ev.Message)
		}
	}
	if sent, failed := stop(); failed != 0 {
		t.Fatalf("%d of %d reads failed", failed, sent)
	}
}

// Every endpoint slower for good (or asked heavier calls: a switch from
// polling eth_blockNumber to eth_getLogs) is no queue that hedging feeds:
// the pause does not bring the medians down. Once the guard has held its
// verdict for the base span (30 s; 3 s here), the bases give way to the new
// pace and hedging resumes while the endpoints stay slow.
func TestHedge_QueueGuardTakesANewPaceAfterItsBaseSpan(t *testing.T) {
	t.Cleanup(engine.SetQueueBaseSpan(3 * time.Second))
	h, stop := pacedPool(t)
	for _, u := range h.sims {
		setMode(t, u, sim.ControlRequest{ExtraLatency: ptr("200ms")})
	}
	s := waitHedge(t, h, 10*time.Second, func(hs engine.HedgeStatus) bool { return hs.Paused })
	if !s.Hedge.Paused {
		t.Fatal("every endpoint 10× slower: hedging not paused")
	}
	pausedAt := time.Now()
	s = waitHedge(t, h, 15*time.Second, func(hs engine.HedgeStatus) bool { return !hs.Paused })
	if s.Hedge.Paused {
		t.Fatalf("endpoints steady at their new pace: hedging still paused after %s (%q)", time.Since(pausedAt).Round(time.Second), s.Hedge.PauseReason)
	}
	if took := time.Since(pausedAt); took < 2*time.Second {
		t.Fatalf("resumed %s after pausing, before the base span (3 s) could have passed", took)
	}
	if sent, failed := stop(); failed != 0 {
		t.Fatalf("%d of %d reads failed", failed, sent)
	}
}

// A pool-wide slowdown that starts while the pool is idle is still a queue
// when traffic comes back: the bases kept from before the lull are the
// endpoints' pace, and a base gives way only to lows seen through a whole
// base span. Before, the first check after the lull took the slow median
// as the base (the only low of the span), and hedging never paused: a
// +200 ms slowdown after 40 s idle fired 34 hedges into it.
func TestHedge_QueueGuardPausesForASlowdownThatStartedWhileIdle(t *testing.T) {
	t.Cleanup(engine.SetQueueBaseSpan(3 * time.Second))
	h, stop := pacedPool(t)
	if sent, failed := stop(); failed != 0 {
		t.Fatalf("%d of %d reads failed", failed, sent)
	}
	time.Sleep(4 * time.Second) // idle past the base span
	for _, u := range h.sims {
		setMode(t, u, sim.ControlRequest{ExtraLatency: ptr("200ms")})
	}
	stop = background(h, 8)
	defer stop()
	s := waitHedge(t, h, 5*time.Second, func(hs engine.HedgeStatus) bool { return hs.Paused })
	if !s.Hedge.Paused {
		t.Fatal("every endpoint 10× slower after a lull: hedging not paused")
	}
	t.Logf("paused: %s", s.Hedge.PauseReason)
}

// A pool slowdown whose answers pass no deadline (every endpoint from 20 to
// 200 ms, under the 250 ms floor) is noted by the queue guard, and its
// answers are forgotten once the endpoints are back at their pace: before,
// nothing noted it, and every auto hedge delay stayed at the slowdown's
// p95 for server.stats_window (three 40 ms endpoints slowed to 200 ms for
// a minute: 214 ms against 65 ms before, for five minutes).
func TestHedge_APoolSlowdownUnderTheDeadlinesIsForgottenOnceBack(t *testing.T) {
	t.Parallel()
	// A try is void when rpcdash measured itself stalled: the slowdown was
	// its own then, not the pool's (fresh-clone CI: "rpcdash itself stalled
	// for 253ms", no endpoint forgot).
	untilJudged(t, func(int) string {
		h, stop := pacedPool(t)
		// The endpoints' paces are taken every 5 s: one taken at 20 ms.
		time.Sleep(6 * time.Second)
		for _, u := range h.sims {
			setMode(t, u, sim.ControlRequest{ExtraLatency: ptr("200ms")})
		}
		if s := waitHedge(t, h, 10*time.Second, func(hs engine.HedgeStatus) bool { return hs.Paused }); !s.Hedge.Paused {
			t.Fatal("every endpoint 10× slower: hedging never paused")
		}
		// Enough of the slowdown's answers in the windows to move the p95 the
		// auto hedge delay is, whether or not they also move the endpoints'
		// routing figures (p50 blended with p90; how many fast answers came
		// before turns on the machine's speed): either way the slowdown is to
		// be forgotten.
		time.Sleep(10 * time.Second)
		if d := h.status().Methods["eth_getBalance"].Hedge.Delay; d < 100*time.Millisecond {
			t.Fatalf("auto hedge delay %v after 10 s at 220 ms; the test wants the slowdown in the windows", d)
		}
		for _, u := range h.sims {
			setMode(t, u, sim.ControlRequest{ExtraLatency: ptr("0s")})
		}
		// Unforgotten, the slowdown's answers hold the p95 for about 10 s more
		// at this rate (its share of the window falling under 5 %).
		deadline := time.Now().Add(5 * time.Second)
		for {
			back := 0 // endpoints that forgot, or the hedge delays alone
			for _, ev := range h.events() {
				if ev.Type == engine.EventPool && (strings.Contains(ev.Message, "back at its pace after the slowdown") ||
					strings.Contains(ev.Message, "the hedge delays' primaries since")) {
					back++
				}
			}
			m := h.status().Methods["eth_getBalance"]
			if back > 0 && m.Hedge.Delay < 100*time.Millisecond {
				t.Logf("%d endpoints (or the hedge delays alone) forgot the slowdown; auto hedge delay %v (%s)", back, m.Hedge.Delay, m.Hedge.DelaySource)
				break
			}
			if time.Now().After(deadline) {
				self := false
				for _, ev := range h.events() {
					t.Logf("%s %s %s %s", ev.Time.Format("05.000"), ev.Type, ev.Endpoint, ev.Message)
					self = self || ev.Type == engine.EventPool && strings.Contains(ev.Message, "rpcdash itself slow")
				}
				if self {
					stop()
					return fmt.Sprintf("rpcdash measured itself stalled on this loaded machine (a slowdown of its own, not the pool's), and %d endpoints forgot the slowdown", back)
				}
				t.Fatalf("5 s after every endpoint is back at 20 ms: %d endpoints (or the hedge delays alone) forgot the slowdown, auto hedge delay %v (%s); want it forgotten", back, m.Hedge.Delay, m.Hedge.DelaySource)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if sent, failed := stop(); failed != 0 {
			t.Fatalf("%d of %d reads failed", failed, sent)
		}
		return ""
	})
}
