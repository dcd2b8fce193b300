package engine_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// The endpoints an upstream batch may go to were ranked when it was sent;
// its hedge, a delay later, goes to none that has left routing since: one
// a probe found on the wrong chain (whose answers are another chain's),
// or unhealthy. s1 is taken out while s0 holds the batch: the hedge goes
// nowhere, and s1 hears nothing. Before: the hedge went to s1 and its
// answer won.
func TestBatch_AHedgeDoesNotGoToAnEndpointTakenOutDuringTheDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ kind, why string }{
		{engine.ExcludeWrongChain, "on chain id 0x5 (5), pool is on 0x1 (1)"},
		{engine.ExcludeUnhealthy, "getHealth: Node is behind by 42 slots"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			// The batch must go to s0 first, ranked ahead by its 1 ms answers
			// to the warm-up; on a loaded machine the warm-up once ranked s1
			// first, the batch went there, and nothing was excluded: that try
			// is void (untilJudged), not a pass.
			untilJudged(t, func(int) string {
				h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
				var eng atomic.Pointer[engine.Engine]
				var held atomic.Int64
				front := frontOf(t, h.sims[0], func(w http.ResponseWriter, r *http.Request, body []byte) bool {
					if held.Add(1) == 1 {
						eng.Load().Exclude("s1", tc.kind, tc.why)
						time.Sleep(300 * time.Millisecond) // past the 100 ms hedge delay
					}
					return false
				}, nil)
				h2 := frontedPair(t, front.URL, h.sims[1].URL(), func(c *engine.Config) { c.Hedge.Enabled, c.Hedge.Delay, c.Hedge.Budget = true, "100ms", 1 })
				eng.Store(h2.eng)
				before := h.sims[1].Counters()
				const n = 50
				r := h2.post(balanceBatch(n, strconv.Itoa))
				decodeBatch(t, r, n)
				if held.Load() == 0 {
					return fmt.Sprintf("the batch went to %s first, not s0", r.endpoint)
				}
				if len(h2.endpoint("s1").Exclusions) == 0 {
					t.Fatal("s1 was not excluded: the test exercises nothing")
				}
				if c := h.sims[1].Counters(); c.HTTP != before.HTTP || r.hedged || r.endpoint != "s0" {
					t.Errorf("s1, excluded (%s) before the hedge delay passed, heard %d requests (%d calls); the batch answered by %q, hedged %v; want none, s0's answer unhedged",
						tc.kind, c.HTTP-before.HTTP, c.Total-before.Total, r.endpoint, r.hedged)
				}
				return ""
			})
		})
	}
}

// An upstream batch of reads of the tip hedges to no endpoint that fell
// behind the chain's head during the delay: its answers would be old ones,
// relayed as current. s1 falls 8 blocks behind (lag-excluded) while s0
// holds the batch: the hedge goes nowhere, and s1 hears nothing. Before:
// the hedge went to s1 and its answer won.
func TestBatch_AHedgeOfTipReadsDoesNotGoToAnEndpointFallenBehindDuringTheDelay(t *testing.T) {
	var target atomic.Value // s0's sim, once started
	var held atomic.Int64
	reached, moved := make(chan struct{}), make(chan struct{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if bytes.HasPrefix(body, []byte("[")) && held.Add(1) == 1 {
			close(reached)
			<-moved
			time.Sleep(300 * time.Millisecond) // past the 100 ms hedge delay
		}
		relay(w, target.Load().(string), body)
	}))
	t.Cleanup(front.Close)
	let := releaseOnce(t, moved)
	r := newHeadRig(t, 2, func(c *engine.Config) {
		c.Endpoints[0].URL = front.URL
		c.Hedge.Enabled, c.Hedge.Delay, c.Hedge.Budget = true, "100ms", 1
	})
	target.Store(r.sims[0].URL())
	r.sims[1].SetLatency(fixed(20 * time.Millisecond))
	r.warmInOrder(10) // s0 the faster
	r.warmUp()
	before := r.sims[1].Counters()
	const n = 50
	got := make(chan reply, 1)
	go func() { got <- r.post(balanceBatch(n, strconv.Itoa)) }()
	<-reached
	r.fallsBehind("s1")
	let()
	rep := <-got
	decodeBatch(t, rep, n)
	if c := r.sims[1].Counters(); c.HTTP != before.HTTP || rep.hedged || rep.endpoint != "s0" {
		t.Errorf("s1, %d blocks behind before the hedge delay passed, heard %d requests (%d calls); the batch answered by %q, hedged %v; want none, s0's answer unhedged",
			r.endpoint("s1").Lag, c.HTTP-before.HTTP, c.Total-before.Total, rep.endpoint, rep.hedged)
	}
}
