package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// latestBlock reads method's latest block through rpcdash and fails the
// test when it is below top, the highest one already returned.
func (r *headRig) latestBlock(id int, method string, top int64) (int64, reply) {
	r.t.Helper()
	rep := r.call(id, method, "latest", false)
	mustOK(r.t, rep)
	n := blockNumberOf(r.t, rep)
	if n < top {
		r.t.Fatalf("%s %d: latest block %d from %s after %d attempts, below %d already returned (s1, %d behind, answers %d; a client of any one endpoint never sees its latest block go back)",
			method, id, n, rep.endpoint, rep.attempts, top, r.realHead()-r.sims[1].Head(), r.sims[1].Head())
	}
	return n, rep
}

// A client polling the latest block through rpcdash (three EVM sims, one 3
// blocks behind, within chain.max_head_lag) was handed one 2–3 blocks below
// one it already had whenever a poll went to the endpoint behind: 4–5 of
// 400 one poll at a time (its exploration), 344–565 of 3200 with 8 clients
// side by side (its share of the load); polling any one sim directly, none.
// Known behind by a probe, the endpoint is not asked: the reads go to the
// one at the pool head, one upstream request each, nothing set aside.
func TestLatestBlock_NeverGoesBackThroughAnEndpointKnownBehind(t *testing.T) {
	r := behindRig(t, sim.ChainEVM, true, nil) // s0 and s1 equals, taking turns
	// eth_getHeaderByNumber's latest is routed the same (the sim has no headers).
	const method = "eth_getBlockByNumber"
	var top int64
	asked, before := r.sims[1].MethodCount(method), r.upstreamCount(method)
	for i := range 6 {
		n, rep := r.latestBlock(i, method, top)
		if rep.attempts != 1 {
			t.Fatalf("read %d: %d attempts, want 1 (the endpoint at the pool head asked first): %s", i, rep.attempts, rep.body)
		}
		top = max(top, n)
	}
	if n := r.sims[1].MethodCount(method) - asked; n != 0 {
		t.Fatalf("s1, 3 blocks behind, asked %d times in 6 reads", n)
	}
	if n := r.upstreamCount(method) - before; n != 6 {
		t.Fatalf("6 reads cost %d upstream requests, want 6", n)
	}
}

// Nor is it explored with such a read: an endpoint that has served no read
// for router.explore_after is given the next one (explore.go), which was
// a latest block from behind.
func TestLatestBlock_EndpointBehindIsNotExploredWithIt(t *testing.T) {
	r := behindRig(t, sim.ChainEVM, true, func(c *engine.Config) {
		c.Router.LagPenalty = 50 * time.Millisecond // s0 first by its cost: only exploration asks s1
		c.Router.ExploreAfter = 2 * time.Second
	})
	top, _ := r.latestBlock(0, "eth_getBlockByNumber", 0)
	asked := r.sims[1].MethodCount("eth_getBlockByNumber")
	for i := range 3 {
		r.round() // the chain moves on; s1 stays 3 behind, its exploration falls due
		for j := range 2 {
			n, rep := r.latestBlock(10*i+j, "eth_getBlockByNumber", top)
			if rep.endpoint != "s0" || rep.attempts != 1 {
				t.Fatalf("read %d.%d: %s after %d attempts, want s0's at once", i, j, rep.endpoint, rep.attempts)
			}
			top = max(top, n)
		}
	}
	if n := r.sims[1].MethodCount("eth_getBlockByNumber") - asked; n != 0 {
		t.Fatalf("s1, 3 blocks behind, explored %d times with a latest block", n)
	}
}

// Between probes an endpoint falls behind unseen: its latest block below
// one already returned is set aside while the other is asked (and its lag
// is learnt from it, so the next reads do not ask it first).
func TestLatestBlock_BehindUnseenIsSetAside(t *testing.T) {
	r := behindRig(t, sim.ChainEVM, false, nil) // s1's lag not probed
	if err := r.eng.Drain(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	top, _ := r.latestBlock(0, "eth_getBlockByNumber", 0) // s0's
	if err := r.eng.Undrain(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	rep := r.s1Asked("eth_getBlockByNumber", func(i int) reply {
		n, rep := r.latestBlock(10+i, "eth_getBlockByNumber", top)
		top = max(top, n)
		return rep
	})
	if rep.endpoint != "s0" || rep.attempts != 2 {
		t.Fatalf("s1 asked: answered by %s after %d attempts: %s; want s0's after 2", rep.endpoint, rep.attempts, rep.body)
	}
	asked := r.sims[1].MethodCount("eth_getBlockByNumber")
	for i := range 4 {
		if _, rep := r.latestBlock(20+i, "eth_getBlockByNumber", top); rep.attempts != 1 {
			t.Fatalf("read %d after s1's lag was seen: %d attempts, want 1", i, rep.attempts)
		}
	}
	if n := r.sims[1].MethodCount("eth_getBlockByNumber") - asked; n != 0 {
		t.Fatalf("s1 asked %d times after its lag was seen", n)
	}
}

// A hedge still goes out beside a slow primary; its answer from the
// endpoint behind does not win while the primary, at the pool head, may
// still answer. s0's answer is held at a front until rpcdash has had s1's.
// (hedge.same_domain false: else the hedge goes to s0 again, againAtHead.)
func TestLatestBlock_HedgeFromBehindDoesNotWinWhileThePrimaryMayAnswer(t *testing.T) {
	var hold func(r *http.Request) // set once the rig is up
	r := behindRig(t, sim.ChainEVM, true, func(c *engine.Config) {
		c.Hedge.Enabled = true
		c.Hedge.Delay = "5ms"
		c.Hedge.Budget = 1
		c.Hedge.SameDomain = false
		url := c.Endpoints[0].URL
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			if hold != nil && strings.Contains(string(body), "eth_getBlockByNumber") {
				hold(req)
			}
			relay(w, url, body)
		}))
		t.Cleanup(front.Close)
		c.Endpoints[0].URL = front.URL
	})
	// s0's block first, for the floor. On a loaded machine a read may be
	// hedged to s1 (its 1 ms answer past the 5 ms delay) and have s1's
	// older block, no block having been returned yet: it reads again.
	var top int64
	for i := 0; top != r.sims[0].Head(); i++ {
		if i == 5 {
			t.Fatalf("5 latest blocks, the highest %d; want s0's %d", top, r.sims[0].Head())
		}
		n, _ := r.latestBlock(i, "eth_getBlockByNumber", top)
		top = max(top, n)
	}
	// s0 answers only once the trace shows s1's hedge answered (or 5 s).
	hold = func(req *http.Request) {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && req.Context().Err() == nil && !r.hedgeAnswered("s1") {
			time.Sleep(2 * time.Millisecond)
		}
	}
	rep := r.call(1, "eth_getBlockByNumber", "latest", false)
	mustOK(t, rep)
	n := blockNumberOf(t, rep)
	if n < top || rep.endpoint != "s0" {
		t.Fatalf("latest block %d from %s after %d attempts (hedged %v), after %d from s0", n, rep.endpoint, rep.attempts, rep.hedged, top)
	}
	if !rep.hedged || rep.attempts != 2 {
		t.Fatalf("hedged %v after %d attempts: the slow primary was not hedged", rep.hedged, rep.attempts)
	}
}

// hedgeAnswered says whether the newest traced request holds a hedge to
// name that answered.
func (r *headRig) hedgeAnswered(name string) bool {
	_, body := r.adminDo("GET", "/v1/requests?limit=1", "")
	var out struct {
		Requests []struct {
			Attempts []struct{ Endpoint, Role, Outcome string }
		}
	}
	if json.Unmarshal(body, &out) != nil || len(out.Requests) == 0 {
		return false
	}
	for _, a := range out.Requests[0].Attempts {
		if a.Endpoint == name && a.Role == "hedge" && a.Outcome == "answer" {
			return true
		}
	}
	return false
}

// A batch's latest blocks go upstream together, to the endpoint at the
// pool head.
func TestLatestBlock_InABatchNeverGoesBack(t *testing.T) {
	r := behindRig(t, sim.ChainEVM, true, nil)
	var top int64
	for i := range 6 {
		rep := r.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",false]},` +
			`{"jsonrpc":"2.0","id":2,"method":"eth_getBlockByNumber","params":["latest",true]}]`)
		var answers []struct {
			ID     int
			Result struct{ Number string }
		}
		if err := json.Unmarshal(rep.body, &answers); err != nil || len(answers) != 2 {
			t.Fatalf("batch answer %s: %v", rep.body, err)
		}
		for _, a := range answers {
			n, err := strconv.ParseInt(strings.TrimPrefix(a.Result.Number, "0x"), 16, 64)
			if err != nil {
				t.Fatalf("batch %d, call %d: %s", i, a.ID, rep.body)
			}
			if n < top {
				t.Fatalf("batch %d, call %d: latest block %d, below %d already returned: %s", i, a.ID, n, top, rep.body)
			}
			top = max(top, n)
		}
	}
}

// With the endpoint at the pool head gone (drained), the one behind is
// all there is: its block is relayed at once, as its own clients get it,
// and becomes the floor, so the reads after cost one request each.
func TestLatestBlock_BehindIsRelayedWhenNoEndpointDoesBetter(t *testing.T) {
	r := behindRig(t, sim.ChainEVM, true, nil)
	r.latestBlock(0, "eth_getBlockByNumber", 0)
	r.behindAloneRelayed(blockNumberOf, "eth_getBlockByNumber", "latest", false)
}

// The primary at the pool head hanging, the older block of the endpoint
// behind (its hedge, or the race at the primary's deadline, set aside) is
// relayed once the primary hangs (execution.hangs: past its deadline and
// quiet for a third of the request timeout), not at the request's
// deadline: it is the only block there is.
func TestLatestBlock_HeldBlockIsRelayedWhenThePrimaryHangs(t *testing.T) {
	t.Parallel()
	for _, hedged := range []bool{true, false} {
		h := headAndBehind(t, hedged, nil)
		first := h.call(1, "eth_getBlockByNumber", "latest", false)
		mustOK(t, first)
		if first.endpoint != "s0" {
			t.Fatalf("hedging %v: first latest block from %s, want s0 (s1 is 3 behind)", hedged, first.endpoint)
		}
		if err := h.eng.InjectFault(engine.ActorAdmin, "s0", engine.FaultSpec{Mode: engine.FaultTimeout}); err != nil {
			t.Fatal(err)
		}
		rep := h.call(2, "eth_getBlockByNumber", "latest", false)
		mustOK(t, rep)
		timeout := h.eng.Config().Server.RequestTimeout
		if rep.endpoint != "s1" || rep.hedged != hedged || rep.took >= timeout*4/5 {
			t.Fatalf("hedging %v, s0 hung: answered by %s (hedged %v) after %s, request timeout %s; want s1's block before the deadline", hedged, rep.endpoint, rep.hedged, rep.took, timeout)
		}
		t.Logf("hedging %v, s0 hung: s1's block %d relayed after %s (s0's was %d)", hedged, blockNumberOf(t, rep), rep.took.Round(time.Millisecond), blockNumberOf(t, first))
	}
}

// headAndBehind starts s0 at the head and s1 3 blocks behind, both 1 ms
// sims, their heads seen (as a probe would), hedging at 20 ms when hedged,
// no lag penalty (s1 is kept from the latest block by the floor, not the
// score); mut, if any, goes last.
func headAndBehind(t *testing.T, hedged bool, mut func(c *engine.Config)) *harness {
	t.Helper()
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = hedged
		c.Hedge.Delay = "20ms"
		c.Hedge.Budget = 1
		c.Router.LagPenalty = 0
		if mut != nil {
			mut(c)
		}
	}, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond), HeadLag: 3})
	for _, i := range []int{0, 1} {
		h.eng.ObserveProbeHead(h.sims[i].Name(), h.sims[i].Head())
	}
	return h
}

// slowFirstAtHead is behindRig (s0 at the head, s1 3 behind, probed) with
// s0 behind a front that holds its answer to the first ask of a latest
// block with full transactions (heldRead's) while that ask's client
// (rpcdash) waits, or 5 s: one of its heavy-tail answers. The test's other
// reads ask without them, and go through: told apart by their params, not
// by their order, since a read hedged on a loaded machine asks s0 twice.
func slowFirstAtHead(t *testing.T, mut func(c *engine.Config)) *headRig {
	var held atomic.Bool
	release := make(chan struct{})
	return behindRig(t, sim.ChainEVM, true, func(c *engine.Config) {
		c.Hedge.Enabled = true
		c.Hedge.Delay = "5ms"
		c.Hedge.Budget = 1
		if mut != nil {
			mut(c)
		}
		url := c.Endpoints[0].URL
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			if isHeldRead(body) && held.CompareAndSwap(false, true) {
				select {
				case <-release:
				case <-req.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}
			relay(w, url, body)
		}))
		t.Cleanup(front.Close)
		t.Cleanup(func() { close(release) })
		c.Endpoints[0].URL = front.URL
	})
}

// heldRead is the read slowFirstAtHead's front holds the first ask of: the
// latest block with full transactions.
func (r *headRig) heldRead(id int) reply {
	return r.call(id, "eth_getBlockByNumber", "latest", true)
}

// floorThenHeldRead reads s0's latest block (the floor, top), then
// heldRead: its reply and block, and s1's count of latest-block asks
// before it.
func (r *headRig) floorThenHeldRead() (top, n int64, rep reply, s1Asked int64) {
	r.t.Helper()
	top, _ = r.latestBlock(0, "eth_getBlockByNumber", 0)
	s1Asked = r.sims[1].MethodCount("eth_getBlockByNumber")
	rep = r.heldRead(1)
	mustOK(r.t, rep)
	return top, blockNumberOf(r.t, rep), rep, s1Asked
}

// isHeldRead says whether body asks heldRead's block.
func isHeldRead(body []byte) bool {
	var call struct {
		Method string
		Params []any
	}
	if json.Unmarshal(body, &call) != nil {
		return false // a batch: the tests send none
	}
	return call.Method == "eth_getBlockByNumber" && len(call.Params) == 2 && call.Params[0] == "latest" && call.Params[1] == true
}

// Two endpoints, the one at the pool head slow now and then (a heavy
// tail), the other 3 blocks behind: the hedge beside a slow primary went
// to the one behind, whose older block was held while the primary might
// answer, so the read waited out the primary's tail all the same (one
// client, two heavy-tail sims with 5 % of answers 0.4–1.2 s: p99 975–1073
// ms). It goes to the endpoint at the head again (againAtHead), whose next
// answer comes in its usual time: s0's first ask held, the read has s0's
// block from the hedge at once; s1 is not asked. Before, s1's older block
// after s0's deadline and hang (1.67 s), or s0's after 5 s.
func TestLatestBlock_SlowOnlyEndpointAtTheHeadIsHedgedToItself(t *testing.T) {
	r := slowFirstAtHead(t, nil)
	top, n, rep, asked := r.floorThenHeldRead()
	t.Logf("s0's first ask held: block %d (top %d) from %s after %d attempts (hedged %v) in %s; s1 asked %d times",
		n, top, rep.endpoint, rep.attempts, rep.hedged, rep.took.Round(time.Millisecond), r.sims[1].MethodCount("eth_getBlockByNumber")-asked)
	if rep.endpoint != "s0" || !rep.hedged || rep.attempts != 2 || n < top {
		t.Fatalf("s0's first ask held: block %d from %s after %d attempts (hedged %v) in %s; want s0's from its hedge", n, rep.endpoint, rep.attempts, rep.hedged, rep.took)
	}
	if rep.took >= time.Second {
		t.Fatalf("s0's first ask held: the read took %s, want its hedge's answer at once", rep.took)
	}
	if k := r.sims[1].MethodCount("eth_getBlockByNumber") - asked; k != 0 {
		t.Fatalf("s1, 3 blocks behind, asked %d times", k)
	}
}

// With hedge.same_domain false the hedge goes to no endpoint already
// asked: it goes to the one behind, as before.
//
// In series: run in parallel (f8032aa) it once saw s1 asked twice in a
// CI run; in series it passed every CI run before.
func TestLatestBlock_SlowOnlyEndpointAtTheHeadSameDomainOff(t *testing.T) {
	r := slowFirstAtHead(t, func(c *engine.Config) {
		c.Hedge.SameDomain = false
		c.Server.RequestTimeout = 2 * time.Second // s0's held ask is waited out
	})
	r.latestBlock(0, "eth_getBlockByNumber", 0)
	asked := r.sims[1].MethodCount("eth_getBlockByNumber")
	rep := r.heldRead(1)
	mustOK(t, rep)
	if k := r.sims[1].MethodCount("eth_getBlockByNumber") - asked; k != 1 || !rep.hedged {
		t.Fatalf("hedge.same_domain false: s1 asked %d times (hedged %v, %s after %d attempts), want its hedge", k, rep.hedged, rep.endpoint, rep.attempts)
	}
}

// The same without hedging: the race at s0's deadline goes to s0 again,
// not to s1 behind (whose block was held while s0 might answer: s0's
// held ask waited out, 5 s, then s1's older block).
func TestLatestBlock_SlowOnlyEndpointAtTheHeadIsRacedToItself(t *testing.T) {
	t.Parallel()
	r := slowFirstAtHead(t, func(c *engine.Config) { c.Hedge.Enabled = false })
	top, n, rep, asked := r.floorThenHeldRead()
	t.Logf("s0's first ask held, no hedging: block %d (top %d) from %s after %d attempts in %s; s1 asked %d times",
		n, top, rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond), r.sims[1].MethodCount("eth_getBlockByNumber")-asked)
	timeout := r.eng.Config().Server.RequestTimeout
	if rep.endpoint != "s0" || rep.attempts != 2 || n < top || rep.took >= timeout/2 {
		t.Fatalf("s0's first ask held, no hedging: block %d from %s after %d attempts in %s (request timeout %s); want s0's from the race at its deadline", n, rep.endpoint, rep.attempts, rep.took, timeout)
	}
	if k := r.sims[1].MethodCount("eth_getBlockByNumber") - asked; k != 0 {
		t.Fatalf("s1, 3 blocks behind, asked %d times", k)
	}
}
