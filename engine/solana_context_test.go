package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// contextSlotOf is the context.slot of a Solana RpcResponse answer.
func contextSlotOf(t testing.TB, r reply) int64 {
	t.Helper()
	var a struct {
		Result struct {
			Context struct{ Slot int64 }
		}
	}
	if err := json.Unmarshal(r.body, &a); err != nil || a.Result.Context.Slot <= 0 {
		t.Fatalf("no context.slot in %s (%v)", r.body, err)
	}
	return a.Result.Context.Slot
}

const solAddr = "Vote111111111111111111111111111111111111111"

// A wallet polling getBalance (or getLatestBlockhash, at any commitment)
// through rpcdash was handed an answer read a slot or three before one it
// had already had, whenever the poll went to an endpoint behind for the
// moment (explored, or hedged to): three Solana sims, one 3 slots behind,
// polled one read at a time, 27 of 4000 answers went back; two of them
// stalling a slot or three now and then, as Solana nodes drift, 8 of 2400,
// and with 8 clients polling side by side 169 of 4000; polling any sim
// directly, none. Such an answer is set aside while the other endpoint is
// asked, whether or not a probe has seen the endpoint behind: between
// probes (5 s) a node drifts behind and back unseen.
func TestSolana_ContextSlotNeverGoesBackFromAnEndpointBehind(t *testing.T) {
	for _, probed := range []bool{true, false} {
		r := behindRig(t, sim.ChainSolana, probed, nil)
		for _, read := range []struct {
			method string
			params []any
		}{
			{"getBalance", []any{solAddr}},
			{"getAccountInfo", []any{solAddr, map[string]any{"encoding": "base64", "commitment": "confirmed"}}},
			{"getLatestBlockhash", []any{map[string]any{"commitment": "processed"}}},
		} {
			var top int64
			asked := r.sims[1].MethodCount(read.method)
			for i := range 6 {
				// An endpoint set aside so ranks after the others for a
				// second (readfloor.go): s1 is asked first again after it.
				r.clock.Advance(time.Second)
				rep := r.call(i, read.method, read.params...)
				mustOK(t, rep)
				slot := contextSlotOf(t, rep)
				if slot < top {
					t.Fatalf("s1's lag seen by a probe: %v; %s %d: context.slot %d from %s after %d attempts, below %d already returned",
						probed, read.method, i, slot, rep.endpoint, rep.attempts, top)
				}
				if rep.attempts > 1 {
					t.Logf("probed %v, %s %d: s1's answer set aside, %s's slot %d relayed after %d attempts", probed, read.method, i, rep.endpoint, slot, rep.attempts)
				}
				top = max(top, slot)
			}
			if n := r.sims[1].MethodCount(read.method) - asked; n < 2 {
				t.Fatalf("%s: s1 asked %d times in 6 reads; the test needs it asked after s0 answered", read.method, n)
			}
		}
	}
}

// The same in a batch: its reads go upstream as one batch, each element is
// judged on its own, and one set aside is read again alone.
func TestSolana_ContextSlotInABatchNeverGoesBack(t *testing.T) {
	r := behindRig(t, sim.ChainSolana, false, nil)
	var top int64
	asked := r.sims[1].MethodCount("getBalance")
	for i := range 6 {
		r.clock.Advance(time.Second) // s1 asked first again (readfloor.go)
		rep := r.post(`[{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["` + solAddr + `"]},` +
			`{"jsonrpc":"2.0","id":2,"method":"getLatestBlockhash","params":[]}]`)
		var answers []struct {
			ID     int
			Result struct{ Context struct{ Slot int64 } }
		}
		if err := json.Unmarshal(rep.body, &answers); err != nil || len(answers) != 2 {
			t.Fatalf("batch answer %s: %v", rep.body, err)
		}
		for _, a := range answers {
			if a.Result.Context.Slot < top {
				t.Fatalf("batch %d, call %d: context.slot %d, below %d already returned: %s", i, a.ID, a.Result.Context.Slot, top, rep.body)
			}
			top = max(top, a.Result.Context.Slot)
		}
	}
	if n := r.sims[1].MethodCount("getBalance") - asked; n < 2 {
		t.Fatalf("s1 asked %d times in 6 batches; the test needs it asked after s0 answered", n)
	}
}

// The endpoint that returned the highest slot answering below it (its own
// answers crossing a slot's edge side by side, which its own clients see
// too) is relayed as it came, one request.
func TestSolana_ContextSlotBelowItsOwnIsRelayed(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	if err := r.eng.Drain(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	top := contextSlotOf(t, r.call(1, "getBalance", solAddr))
	r.sims[0].SetHeadLag(1) // as an answer read a moment before another is
	if err := r.eng.Undrain(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		rep := r.call(10+i, "getBalance", solAddr)
		mustOK(t, rep)
		if rep.attempts != 1 {
			t.Fatalf("read %d: answered by %s after %d attempts: %s; want one", i, rep.endpoint, rep.attempts, rep.body)
		}
		if slot := contextSlotOf(t, rep); rep.endpoint == "s0" && slot != top-1 {
			t.Fatalf("read %d: s0's slot %d, want %d", i, slot, top-1)
		}
	}
}

// With no endpoint doing better (s0 drained), the answer of the endpoint
// behind is relayed, at once and without error, as a client of it alone
// gets it; it becomes the floor, so the next reads cost one request each.
func TestSolana_ContextSlotBehindIsRelayedWhenNoEndpointDoesBetter(t *testing.T) {
	r := behindRig(t, sim.ChainSolana, true, nil)
	for i := range 4 { // s0's slot returned
		mustOK(t, r.call(i, "getBalance", solAddr))
	}
	r.behindAloneRelayed(contextSlotOf, "getBalance", solAddr)
}

// Endpoints at the same slot take turns at one request per read: nothing
// is set aside while no endpoint is behind.
func TestSolana_ContextSlotAtThePoolHeadCostsOneRequest(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	before := r.upstreamCount("getBalance")
	for i := range 6 {
		if rep := r.call(i, "getBalance", solAddr); rep.attempts != 1 {
			t.Fatalf("read %d: %d attempts, want 1: %s", i, rep.attempts, rep.body)
		}
	}
	if n := r.upstreamCount("getBalance") - before; n != 6 {
		t.Fatalf("6 reads cost %d upstream requests, want 6", n)
	}
}

// s0 failing (its breaker kept closed), s1's answer from behind is the
// best there is: relayed, it becomes the floor, so that the next reads
// asking s1 first take its answer at once rather than asking s0 again.
func TestSolana_ContextSlotRelayedFromBehindBecomesTheFloor(t *testing.T) {
	r := behindRig(t, sim.ChainSolana, true, func(c *engine.Config) { c.Breaker.Failures = 1000 })
	for i := range 4 {
		mustOK(t, r.call(i, "getBalance", solAddr))
	}
	if err := r.eng.InjectFault(engine.ActorAdmin, "s0", engine.FaultSpec{Mode: engine.FaultError}); err != nil {
		t.Fatal(err)
	}
	once := 0
	for i := range 6 {
		rep := r.call(10+i, "getBalance", solAddr)
		mustOK(t, rep)
		if rep.endpoint != "s1" || contextSlotOf(t, rep) != r.sims[1].Head() {
			t.Fatalf("read %d, s0 failing: answered by %s: %s; want s1's", i, rep.endpoint, rep.body)
		}
		if rep.attempts == 1 {
			once++
		}
		t.Logf("read %d: %s after %d attempts", i, rep.endpoint, rep.attempts)
	}
	// Equals take turns: about half the reads ask s1 first.
	if once < 2 {
		t.Fatalf("%d of 6 reads took s1's answer at once; s1's slot relayed did not become the floor", once)
	}
}

// Two fast endpoints steadily 2 slots behind a slower one at the head
// (within chain.max_head_lag): every read was asked of all three, the fast
// answers going below the floor that the head's answers kept raising, 2.9
// to 3.0 upstream requests a read and a p50 of 47 ms, against 42 ms asking
// the slow endpoint alone. Set aside once, an endpoint ranks after the
// others for that method for a second (readfloor.go).
func TestSolana_EndpointsBelowTheFloorAreAskedAfterTheOneAtIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) { c.Chain.Kind = "solana" },
		sim.Config{Chain: sim.ChainSolana, Latency: fixed(40 * time.Millisecond)},
		sim.Config{Chain: sim.ChainSolana, Latency: fixed(2 * time.Millisecond), HeadLag: 2},
		sim.Config{Chain: sim.ChainSolana, Latency: fixed(2 * time.Millisecond), HeadLag: 2})
	asked := func() (n int64) {
		for _, u := range h.sims {
			n += u.MethodCount("getBalance")
		}
		return n
	}
	for i := range 10 {
		mustOK(t, h.call(i, "getBalance", solAddr))
	}
	const reads = 50
	before := asked()
	var top int64
	for i := range reads {
		rep := h.call(100+i, "getBalance", solAddr)
		mustOK(t, rep)
		slot := contextSlotOf(t, rep)
		if slot < top {
			t.Fatalf("read %d: context.slot %d from %s, below %d already returned", i, slot, rep.endpoint, top)
		}
		top = max(top, slot)
	}
	perRead := float64(asked()-before) / reads
	t.Logf("%d reads: %.2f upstream requests each (s0 %d, s1 %d, s2 %d in all)", reads, perRead,
		h.sims[0].MethodCount("getBalance"), h.sims[1].MethodCount("getBalance"), h.sims[2].MethodCount("getBalance"))
	if perRead > 1.5 {
		t.Fatalf("%d reads cost %.2f upstream requests each; want the endpoint at the floor asked first, about 1", reads, perRead)
	}
}

// In rpcdash's first seconds the chain's pace is not known, so the pool
// head (probed seconds ago) is not carried forward, and a confirmed
// context.slot read since looked beyond it: the floor was dropped, and 22
// to 35 of a client's first 300 confirmed getBalance answers went back a
// slot or two, from the endpoint behind.
func TestSolana_ContextSlotNeverGoesBackBeforeThePaceIsKnown(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.sims[1].SetHeadLag(2)
	r.probeAll()
	r.clock.Advance(10 * time.Second) // no probe since: the pool head is 10 slots old
	if p := r.status().HeadPace; p != 0 {
		t.Fatalf("pace %v: the test needs it unknown", p)
	}
	var top int64
	asked := r.sims[1].MethodCount("getBalance")
	for i := range 6 {
		rep := r.call(i, "getBalance", solAddr, map[string]any{"commitment": "confirmed"})
		mustOK(t, rep)
		slot := contextSlotOf(t, rep)
		if slot < top {
			t.Fatalf("read %d: context.slot %d from %s after %d attempts, below %d already returned", i, slot, rep.endpoint, rep.attempts, top)
		}
		top = max(top, slot)
	}
	if r.sims[1].MethodCount("getBalance") == asked {
		t.Fatal("s1 never asked: the test needs its answer below s0's")
	}
	// A confirmed getSlot keeps its floor by the same bound (keepMonotonic).
	top = 0
	for i := range 6 {
		rep := r.call(20+i, "getSlot", map[string]any{"commitment": "confirmed"})
		mustOK(t, rep)
		var slot int64
		if err := json.Unmarshal([]byte(resultString(t, rep)), &slot); err != nil {
			t.Fatal(err)
		}
		if slot < top {
			t.Fatalf("getSlot %d: %d from %s, below %d already returned", i, slot, rep.endpoint, top)
		}
		top = max(top, slot)
	}
}

// getEpochInfo carries no context, but its absoluteSlot is the slot of the
// bank it was read at: through rpcdash it went back a slot or two 5 times
// in 300 reads at each commitment, beside endpoints 2 slots behind;
// directly, never. It keeps the context.slot floor of its commitment.
func TestSolana_EpochInfoNeverGoesBack(t *testing.T) {
	t.Parallel()
	sims := newHarness(t, func(c *engine.Config) { c.Chain.Kind = "solana" },
		sim.Config{Chain: sim.ChainSolana}, sim.Config{Chain: sim.ChainSolana}).sims
	var asked [2]atomic.Int64
	front := func(i int, slot int64) string {
		return simFront(t, sims[i], func(w http.ResponseWriter, body []byte) bool {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &req) != nil || req.Method != "getEpochInfo" {
				return false
			}
			asked[i].Add(1)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"absoluteSlot":%d,"blockHeight":%d,"epoch":27,"slotIndex":2790,"slotsInEpoch":432000}}`, req.ID, slot, slot-100)
			return true
		})
	}
	h := newHarness(t, func(c *engine.Config) {
		c.Chain.Kind = "solana"
		c.Endpoints[0].URL, c.Endpoints[1].URL = front(0, 1000), front(1, 998)
	}, sim.Config{Chain: sim.ChainSolana}, sim.Config{Chain: sim.ChainSolana})
	epochSlot := func(r reply) int64 {
		var a struct{ Result struct{ AbsoluteSlot int64 } }
		if err := json.Unmarshal(r.body, &a); err != nil || a.Result.AbsoluteSlot == 0 {
			t.Fatalf("getEpochInfo: %s", r.body)
		}
		return a.Result.AbsoluteSlot
	}
	h.adminDo("POST", "/v1/endpoints/s1/drain", "")
	if slot := epochSlot(h.call(1, "getEpochInfo")); slot != 1000 {
		t.Fatalf("s1 drained: absoluteSlot %d, want s0's 1000", slot)
	}
	h.adminDo("POST", "/v1/endpoints/s1/undrain", "")
	before := asked[1].Load()
	for i := range 6 {
		r := h.call(10+i, "getEpochInfo")
		if slot := epochSlot(r); slot != 1000 {
			t.Fatalf("read %d: absoluteSlot %d from %s after %d attempts, below the 1000 already returned", i, slot, r.endpoint, r.attempts)
		}
	}
	if asked[1].Load() == before {
		t.Fatal("s1 never asked: the test needs its answer below s0's")
	}
}
