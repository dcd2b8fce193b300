package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

func TestWrites_NeverSentTwiceWhileEndpointsHangAndFail(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Server.RequestTimeout = 800 * time.Millisecond
		c.Hedge.Enabled = true // writes must stay unhedged even so
	}, sim.Config{}, sim.Config{}, sim.Config{})
	h.sims[0].SetMode(sim.ModeHang)
	h.sims[1].SetMode(sim.ModeError)

	const n = 200
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				h.call(i, "eth_sendRawTransaction", fmt.Sprintf("0x%064x", i))
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()

	seen := map[string]int{}
	total := 0
	for _, s := range h.sims {
		for _, p := range s.Submissions() {
			seen[p]++
			total++
		}
	}
	if total > n {
		t.Fatalf("sims saw %d submissions for %d writes", total, n)
	}
	for p, c := range seen {
		if c > 1 {
			t.Fatalf("payload %s submitted %d times", p, c)
		}
	}
	if st := h.status(); st.Totals.Hedge != 0 || st.Totals.Failover != 0 {
		t.Fatalf("writes were hedged (%d) or failed over (%d)", st.Totals.Hedge, st.Totals.Failover)
	}
	t.Logf("%d submissions reached the sims: %d", n, total)
}

func TestWrites_FailOverOnlyWhenConnectionRefused(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		// First endpoint: a port nothing listens on.
		c.Endpoints = append([]engine.EndpointConfig{{Name: "dead", URL: "http://127.0.0.1:1"}}, c.Endpoints...)
	}, sim.Config{})
	r := h.call(1, "eth_sendRawTransaction", "0x01")
	mustOK(t, r)
	if r.endpoint != "s0" || r.attempts != 2 {
		t.Fatalf("answered by %s after %d attempts; want s0 after a refused connection", r.endpoint, r.attempts)
	}
	if got := len(h.sims[0].Submissions()); got != 1 {
		t.Fatalf("sim saw %d submissions", got)
	}
}

// The router's score applies to writes: with one of three endpoints 750 ms
// slower, most writes go to the fast ones, each sent once. The slow one is
// put first as well as second: a cold pool's first write goes to the first
// endpoint, and a test whose first endpoint is fast passes whatever the score
// does. With router.write_affinity at its default as well as off: the
// affinity sends writes to the endpoint that took the last one first, and
// each write extends its window, so before affinityYieldMargin the cold
// pick alone decided (60 of 60 to a slow first).
func TestWrites_AvoidSlowEndpoint(t *testing.T) {
	t.Parallel()
	fast, slowCfg := sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(760 * time.Millisecond)}
	for _, affinity := range []time.Duration{0, engine.Default().Router.WriteAffinity} {
		for _, at := range []int{0, 1} {
			t.Run(fmt.Sprintf("write_affinity=%s/slow-s%d", affinity, at), func(t *testing.T) {
				sims := []sim.Config{fast, fast, fast}
				sims[at] = slowCfg
				h := newHarness(t, func(c *engine.Config) { c.Router.WriteAffinity = affinity }, sims...)
				const n = 60
				for i := 0; i < n; i++ {
					mustOK(t, h.call(i, "eth_sendRawTransaction", fmt.Sprintf("0x%064x", i)))
				}
				slow := len(h.sims[at].Submissions())
				total := 0
				for _, s := range h.sims {
					total += len(s.Submissions())
				}
				if total != n {
					t.Fatalf("%d submissions for %d writes", total, n)
				}
				if slow > n/10 {
					t.Fatalf("slow endpoint took %d of %d writes", slow, n)
				}
				t.Logf("slow endpoint took %d of %d writes", slow, n)
			})
		}
	}
}

// A client that goes away after handing a write over does not take the write
// with it: sent to a node directly, the write would have arrived. The fault
// holds the attempt before it is sent, as a slow connection to a remote
// endpoint does.
func TestWrites_SentWhenTheClientLeavesBeforeItGoesOut(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	if err := h.eng.InjectFault(engine.ActorAdmin, "s0", engine.FaultSpec{Mode: engine.FaultLatency, Latency: engine.Duration(300 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	inFlight := func() int64 { return h.eng.Snapshot().Endpoints[0].InFlight }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	left := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.rpc,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x01"]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := h.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		left <- err
	}()
	testutil.WaitUntil(t, 5*time.Second, "the write's attempt to start", func() bool { return inFlight() == 1 })
	cancel()
	if err := <-left; err == nil {
		t.Fatal("the client got an answer before it left; the test needs the attempt held")
	}
	testutil.WaitUntil(t, 5*time.Second, "the write's attempt to end", func() bool { return inFlight() == 0 })
	if got := h.sims[0].Submissions(); len(got) != 1 {
		t.Fatalf("the endpoint saw %d submissions of the write the client handed over, want 1", len(got))
	}
}

// A request sent once (a write, a method in no table) that reaches its
// deadline while its endpoint still works on it may have been carried out.
// It was answered -32603 "request timed out … (s0 still working on it)",
// which viem retries on its own: the transaction sent a second time, where
// a client talking to the node directly would have waited, or had a
// timeout it does not resend blindly. Now it is answered as shutdown
// answers such a request cut: -32000, which viem never retries, naming the
// endpoint and saying it may have carried it out and to check before
// sending it again. A read that timed out keeps -32603 (safe to resend), in
// a batch too.
func TestWrites_TimedOutAfterItWasSentSaysCheckBeforeSendingAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) { c.Server.RequestTimeout = 300 * time.Millisecond },
		sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)})
	for _, s := range h.sims {
		s.SetMode(sim.ModeHang) // reads the body, then never answers
	}
	const timedOut = "request timed out: no answer within server.request_timeout 300ms"
	// sentOnce checks the answer of a request sent once that hung, and that
	// it reached exactly one endpoint exactly once.
	sentOnce := func(what, method string, code int, msg string) {
		t.Helper()
		testutil.WaitUntil(t, 5*time.Second, what+" seen upstream", func() bool { return h.upstreamCount(method) >= 1 })
		if n := h.upstreamCount(method); n != 1 {
			t.Fatalf("%s: delivered %d times upstream, want once", what, n)
		}
		to := "s0"
		if h.sims[1].MethodCount(method) == 1 {
			to = "s1"
		}
		if code != -32000 || !containsAll(msg, timedOut, "("+to+" still working on it)",
			"sent to "+to+", which may have carried it out: check before sending it again") {
			t.Fatalf("%s: %d %q; want -32000 naming %s, saying it may have carried it out and to check before sending it again", what, code, msg, to)
		}
		t.Logf("%s: %d %q", what, code, msg)
	}
	for i, method := range []string{"eth_sendRawTransaction", "mev_sendBundle"} {
		r := h.call(i, method, fmt.Sprintf("0x%02x", i+1))
		e := r.rpcError()
		if e == nil || r.attempts != 1 {
			t.Fatalf("%s: %d attempts, %s; want an error after one", method, r.attempts, r.body)
		}
		code, _ := e["code"].(float64)
		msg, _ := e["message"].(string)
		sentOnce(method, method, int(code), msg)
	}
	r := h.call(5, "eth_getBalance", addr, "latest")
	e := r.rpcError()
	if msg, _ := e["message"].(string); e == nil || e["code"] != float64(-32603) || !containsAll(msg, timedOut, "still working on it") ||
		strings.Contains(msg, "carried") {
		t.Fatalf("read: %s; want -32603, the request's timeout as before", r.body)
	}

	r = h.post(`[{"jsonrpc":"2.0","id":10,"method":"eth_sendTransaction","params":[{"from":"` + addr + `"}]},` +
		`{"jsonrpc":"2.0","id":11,"method":"eth_getBalance","params":["` + addr + `","latest"]}]`)
	got := batchReplies(t, r, 2)
	if got[0].Error == nil || got[1].Error == nil {
		t.Fatalf("batch: %s; want both elements timed out", r.body)
	}
	sentOnce("batch's write", "eth_sendTransaction", got[0].Error.Code, got[0].Error.Message)
	if e := got[1].Error; e.Code != -32603 || strings.Contains(e.Message, "carried") {
		t.Fatalf("batch's read: %+v; want -32603", e)
	}
}

// A cold pool's first write goes by what the first probes timed: before, it
// went to the first endpoint in the config, 750 ms slower than the others,
// while fewer than five answers made none of them measured. One probe of
// each endpoint stands in for the probes rpcdash serve runs at start.
func TestWrites_ColdPoolFirstWriteGoesByTheFirstProbes(t *testing.T) {
	t.Parallel()
	fast := sim.Config{Latency: fixed(10 * time.Millisecond)}
	h := newHarness(t, nil, sim.Config{Latency: fixed(760 * time.Millisecond)}, fast, fast)
	for _, name := range []string{"s0", "s1", "s2"} {
		if _, err := h.eng.Probe(context.Background(), name, "eth_blockNumber", nil); err != nil {
			t.Fatalf("probe of %s: %v", name, err)
		}
	}
	const n = 10
	for i := range n {
		r := h.call(i, "eth_sendRawTransaction", rawTx(i))
		mustOK(t, r)
		if i == 0 {
			t.Logf("the first write went to %s", r.endpoint)
		}
	}
	if slow := len(h.sims[0].Submissions()); slow != 0 {
		t.Fatalf("the slow s0, first in the config, took %d of %d writes after one probe of each endpoint timed it at 760 ms against 10 ms", slow, n)
	}
}
