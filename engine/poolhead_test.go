package engine_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// headRig is sims on one test clock (a block a second) in front of an
// engine on the same clock; the test plays the probes (ObserveProbeHead, as
// the probe runner does), so heads move and are seen only when it says.
type headRig struct {
	*harness
	clock *testutil.Clock
	names []string
	lag   int64
	chain *sim.Upstream // never started: the true head, for reference
}

func newHeadRig(t *testing.T, n int, mut func(*engine.Config)) *headRig {
	t.Helper()
	return newChainHeadRig(t, n, sim.ChainEVM, mut)
}

// newChainHeadRig is newHeadRig for a chain kind (a block or a slot a
// second, either way).
// behindRig is two sims of chain taking turns (no lag penalty, no write
// affinity) with s1 three blocks or slots behind s0, within
// chain.max_head_lag (5), and, when probed, known to be by a probe.
func behindRig(t *testing.T, chain string, probed bool, mut func(*engine.Config)) *headRig {
	t.Helper()
	r := newChainHeadRig(t, 2, chain, func(c *engine.Config) {
		c.Router.LagPenalty = 0
		c.Router.WriteAffinity = 0
		if mut != nil {
			mut(c)
		}
	})
	r.warmUp()
	r.sims[1].SetHeadLag(3)
	if probed {
		r.probeAll()
	}
	return r
}

func newChainHeadRig(t *testing.T, n int, chain string, mut func(*engine.Config)) *headRig {
	t.Helper()
	clock := testutil.NewClock(testutil.Epoch)
	cfgs := make([]sim.Config, n)
	for i := range cfgs {
		cfgs[i] = sim.Config{Chain: chain, Latency: fixed(time.Millisecond), BlockTime: time.Second}
	}
	withKind := func(c *engine.Config) {
		c.Chain.Kind = chain
		if mut != nil {
			mut(c)
		}
	}
	r := &headRig{harness: newClockedHarness(t, clock, withKind, cfgs...), clock: clock,
		chain: sim.New(sim.Config{Chain: chain, Clock: clock.Now, BlockTime: time.Second})}
	for _, ep := range r.eng.Config().Endpoints {
		r.names = append(r.names, ep.Name)
	}
	r.lag = r.eng.Config().Chain.MaxHeadLag
	return r
}

// probeAll is one probe of every endpoint, in config order, now.
func (r *headRig) probeAll() {
	for i, u := range r.sims {
		r.eng.ObserveProbeHead(r.names[i], u.Head())
	}
}

// round moves the chain one block on and probes every endpoint.
func (r *headRig) round() {
	r.clock.Advance(time.Second)
	r.probeAll()
}

// warmUp is the start-up probe round and the two after it, which measure
// the chain's pace.
func (r *headRig) warmUp() {
	r.t.Helper()
	r.probeAll()
	r.round()
	r.round()
	if p := r.status().HeadPace; p != 1 {
		r.t.Fatalf("pace after warm-up: %v blocks/s, want 1", p)
	}
}

// realHead is the chain's true head.
func (r *headRig) realHead() int64 { return r.chain.Head() }

// blockNumber reads eth_blockNumber through rpcdash and checks it is a
// result within chain.max_head_lag of the real head.
func (r *headRig) blockNumber(id int) (int64, reply) {
	r.t.Helper()
	rep := r.call(id, "eth_blockNumber")
	mustOK(r.t, rep)
	v, err := strconv.ParseInt(strings.Trim(resultString(r.t, rep), `"`)[2:], 16, 64)
	if err != nil {
		r.t.Fatal(err)
	}
	if real := r.realHead(); v < real-r.lag || v > real+r.lag {
		r.t.Fatalf("eth_blockNumber %d from %s: the real head is %d (chain.max_head_lag %d)", v, rep.endpoint, real, r.lag)
	}
	return v, rep
}

// headEvents are the head events of one endpoint, as "from>to: message".
func (r *headRig) headEvents(name string) []string {
	var out []string
	for _, ev := range r.events() {
		if ev.Type == engine.EventHead && ev.Endpoint == name {
			out = append(out, ev.From+">"+ev.To+": "+ev.Message)
		}
	}
	return out
}

func (r *headRig) aheadExclusion(name string) (string, bool) {
	for _, x := range r.endpoint(name).Exclusions {
		if strings.HasPrefix(x, engine.ExcludeAhead+": ") {
			return x, true
		}
	}
	return "", false
}

// One endpoint starts reporting a head a million blocks beyond the chain.
// It is the one flagged; the others keep serving tip-dependent reads, and
// no client sees the bogus head, although the first sign of it is an
// answer to a client's eth_blockNumber.
func TestHeads_BogusHeadIsFlaggedAheadAndTheOthersKeepServing(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	r.sims[2].SetHeadAhead(1_000_000)

	// No probe yet: equals take turns, so one of the next reads is s2's,
	// and its answer is set aside while another endpoint is asked.
	found := false
	for i := 0; i < 6 && !found; i++ {
		if _, rep := r.blockNumber(i); rep.endpoint == "s2" {
			t.Fatalf("s2's bogus head reached a client: %s", rep.body)
		} else if rep.attempts > 1 {
			t.Logf("read %d: s2's answer set aside, answered by %s after %d attempts", i, rep.endpoint, rep.attempts)
		}
		_, found = r.aheadExclusion("s2")
	}
	if !found {
		t.Fatal("six eth_blockNumber reads and s2 was not found out")
	}
	if n := r.sims[2].MethodCount("eth_blockNumber"); n != 1 {
		t.Fatalf("s2 answered %d client eth_blockNumber reads, want exactly the one that found it out", n)
	}

	const reads = 300
	for i := 0; i < reads; i++ {
		if i%50 == 25 {
			r.round()
		}
		if _, rep := r.blockNumber(i); rep.endpoint == "s2" {
			t.Fatalf("read %d: eth_blockNumber answered by the bogus s2", i)
		}
		bal := r.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, bal)
		if bal.endpoint == "s2" {
			t.Fatalf("read %d: eth_getBalance answered by the bogus s2", i)
		}
	}

	st := r.status()
	if st.Totals.ClientErrors != 0 {
		t.Fatalf("%d client errors", st.Totals.ClientErrors)
	}
	if real := r.realHead(); st.MaxHead < real-r.lag || st.MaxHead > real {
		t.Fatalf("pool head %d, real head %d", st.MaxHead, real)
	}
	for _, name := range []string{"s0", "s1"} {
		ep := r.endpoint(name)
		if !ep.Routable || ep.LagExcluded || ep.Lag != 0 || len(ep.Exclusions) != 0 {
			t.Fatalf("%s: routable=%v lag_excluded=%v lag=%d exclusions=%q", name, ep.Routable, ep.LagExcluded, ep.Lag, ep.Exclusions)
		}
		if evs := r.headEvents(name); len(evs) != 0 {
			t.Fatalf("%s has head events: %q", name, evs)
		}
	}
	evs := r.headEvents("s2")
	if len(evs) != 1 || !strings.HasPrefix(evs[0], ">ahead: excluded: head ") || !strings.Contains(evs[0], "blocks beyond the pool's pace") {
		t.Fatalf("s2's head events: %q", evs)
	}
	x, _ := r.aheadExclusion("s2")
	if s2 := r.endpoint("s2"); s2.Routable {
		t.Fatal("s2 routable while flagged ahead")
	}
	t.Logf("%d eth_blockNumber and %d eth_getBalance reads, 0 errors; s2: %s", reads+6, reads, x)
	t.Logf("event: %s", evs[0])
}

// The incident that happens: endpoints stop advancing while another goes
// on at the chain's pace. The one going on is not a jump; the stuck ones
// are lagging, as before, and come back once they move again.
func TestHeads_StuckEndpointsAreStillExcludedAsLagging(t *testing.T) {
	for _, stuck := range [][]string{{"s1"}, {"s1", "s2"}} {
		t.Run(fmt.Sprintf("%d stuck", len(stuck)), func(t *testing.T) {
			r := newHeadRig(t, 3, nil)
			r.warmUp()
			idx := map[string]int{"s1": 1, "s2": 2}
			for _, name := range stuck {
				r.sims[idx[name]].SetHeadFrozen(true)
			}
			for range 8 {
				r.round()
				for j := range 3 {
					mustOK(t, r.call(j, "eth_getBalance", addr, "latest"))
				}
			}
			for _, name := range stuck {
				ep := r.endpoint(name)
				if !ep.LagExcluded || ep.Lag != 8 || ep.Routable {
					t.Fatalf("%s stuck for 8 blocks: lag_excluded=%v lag=%d routable=%v", name, ep.LagExcluded, ep.Lag, ep.Routable)
				}
				evs := r.headEvents(name)
				if len(evs) != 1 || evs[0] != fmt.Sprintf("in-sync>lagging: 6 behind the pool's head %d (chain.max_head_lag 5): out of routing for tip-dependent reads", r.realHead()-2) {
					t.Fatalf("%s's head events: %q", name, evs)
				}
				t.Logf("%s: %s", name, evs[0])
			}
			if evs := r.headEvents("s0"); len(evs) != 0 {
				t.Fatalf("s0, advancing at the chain's pace, has head events: %q", evs)
			}
			if st := r.status(); st.MaxHead != r.realHead() {
				t.Fatalf("pool head %d, s0 is at %d", st.MaxHead, r.realHead())
			}
			before := make([]int64, 3)
			for i, u := range r.sims {
				before[i] = u.MethodCount("eth_getBalance")
			}
			for i := range 30 {
				rep := r.call(i, "eth_getBalance", addr, "latest")
				mustOK(t, rep)
				if rep.endpoint != "s0" && !(len(stuck) == 1 && rep.endpoint == "s2") {
					t.Fatalf("a tip-dependent read went to %s, which is stuck", rep.endpoint)
				}
			}
			for _, name := range stuck {
				if n := r.sims[idx[name]].MethodCount("eth_getBalance"); n != before[idx[name]] {
					t.Fatalf("%s got %d tip-dependent reads while lagging", name, n-before[idx[name]])
				}
			}

			for _, name := range stuck {
				r.sims[idx[name]].SetHeadFrozen(false)
			}
			for range r.eng.Config().Probes.Recover {
				r.round()
			}
			for _, name := range stuck {
				ep := r.endpoint(name)
				evs := r.headEvents(name)
				if ep.LagExcluded || !ep.Routable || len(evs) != 2 || !strings.HasPrefix(evs[1], "lagging>in-sync: lag 0 within 5 for 3 probes") {
					t.Fatalf("%s after it moved again for 3 probes: lag_excluded=%v routable=%v events %q", name, ep.LagExcluded, ep.Routable, evs)
				}
			}
		})
	}
}

// The pool head is the highest head of the endpoints that count: when the
// endpoint that set it stops counting (another chain, drained) or its head
// goes back (a restart onto a snapshot), the pool head comes down, and the
// endpoint that only lagged behind that one is readmitted.
func TestHeads_PoolHeadComesDownWithTheEndpointThatSetIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		act  func(r *headRig)
	}{
		{"wrong chain", func(r *headRig) {
			r.eng.Exclude("s0", engine.ExcludeWrongChain, "on chain id 0x5 (5), pool is on 0x1 (1)")
		}},
		{"drained", func(r *headRig) {
			if code, b := r.adminDo("POST", "/v1/endpoints/s0/drain", ""); code != 200 {
				r.t.Fatalf("drain: %d %s", code, b)
			}
		}},
		{"head went back", func(r *headRig) {
			r.sims[0].SetHeadAhead(0)
			r.sims[0].SetHeadLag(100)
			r.eng.ObserveProbeHead("s0", r.sims[0].Head())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newHeadRig(t, 3, nil)
			r.sims[0].SetHeadAhead(3) // within chain.max_head_lag of the others: credible
			r.sims[1].SetHeadLag(3)   // 6 behind s0, 3 behind s2
			r.warmUp()
			real := r.realHead()
			if st := r.status(); st.MaxHead != real+3 {
				t.Fatalf("pool head %d, want s0's %d", st.MaxHead, real+3)
			}
			if ep := r.endpoint("s1"); !ep.LagExcluded || ep.Lag != 6 {
				t.Fatalf("s1, 6 behind s0: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
			}
			tc.act(r)
			if st := r.status(); st.MaxHead != real {
				t.Fatalf("after s0 stopped setting it, the pool head is %d, want s2's %d", st.MaxHead, real)
			}
			if ep := r.endpoint("s1"); ep.Lag != 3 {
				t.Fatalf("s1's lag against s2: %d, want 3", ep.Lag)
			}
			for range r.eng.Config().Probes.Recover {
				r.round()
			}
			ep := r.endpoint("s1")
			evs := r.headEvents("s1")
			if ep.LagExcluded || !ep.Routable || len(evs) != 2 || !strings.HasPrefix(evs[1], "lagging>in-sync: lag ") || !strings.Contains(evs[1], "within 5 for 3 probes: readmitted") {
				t.Fatalf("s1 after 3 probes within the bound: lag_excluded=%v routable=%v events %q", ep.LagExcluded, ep.Routable, evs)
			}
			t.Logf("pool head %d -> %d; s1: %s", real+3, real, evs[1])
		})
	}
}

// At start there is no pace to measure a head against: the endpoints that
// agree outvote the one that does not.
func TestHeads_AtStartTheAgreeingEndpointsOutvoteABogusHead(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.sims[1].SetHeadFixed(math.MaxInt64) // a proxy answering 0x7fffffffffffffff
	r.warmUp()
	evs := r.headEvents("s1")
	want := fmt.Sprintf(">ahead: excluded: head %d is %d blocks above the 2 of 3 endpoints that agree on %d at start", int64(math.MaxInt64), math.MaxInt64-(r.realHead()-2), r.realHead()-2)
	if len(evs) != 1 || !strings.HasPrefix(evs[0], want) {
		t.Fatalf("s1's head events %q, want one starting %q", evs, want)
	}
	if st := r.status(); st.MaxHead != r.realHead() {
		t.Fatalf("pool head %d, real head %d", st.MaxHead, r.realHead())
	}
	for i := range 20 {
		if _, rep := r.blockNumber(i); rep.endpoint == "s1" {
			t.Fatal("eth_blockNumber answered by the bogus s1")
		}
	}
	for _, name := range []string{"s0", "s2"} {
		if ep := r.endpoint(name); !ep.Routable || ep.LagExcluded {
			t.Fatalf("%s: routable=%v lag_excluded=%v", name, ep.Routable, ep.LagExcluded)
		}
	}
	t.Logf("s1: %s", evs[0])
}

// A client was handed a bogus head before it could be found out (at start,
// before any other endpoint had reported). That head never becomes the
// floor of "no time travel": the next answers are the chain's, and they
// never go back again.
func TestHeads_ABogusHeadServedAtStartIsNotTheFloor(t *testing.T) {
	r := newHeadRig(t, 3, func(c *engine.Config) {
		c.Router.LagPenalty = time.Nanosecond // s1, 2 behind, takes its turn
	})
	bogus := r.realHead() + 1_000_000
	r.sims[0].SetHeadFixed(bogus)
	r.sims[1].SetMode(sim.ModeError)
	r.sims[2].SetMode(sim.ModeError)
	first := r.call(0, "eth_blockNumber")
	mustOK(t, first)
	if got := strings.Trim(resultString(t, first), `"`); got != "0x"+strconv.FormatInt(bogus, 16) || first.endpoint != "s0" {
		t.Fatalf("first answer %s from %s, want s0's bogus head (nothing to measure it against yet)", got, first.endpoint)
	}
	r.sims[1].SetMode(sim.ModeNormal)
	r.sims[2].SetMode(sim.ModeNormal)
	r.sims[1].SetHeadLag(2) // answers alternate between heads 2 apart
	r.warmUp()
	if _, ok := r.aheadExclusion("s0"); !ok {
		t.Fatalf("s0 not flagged ahead: %q", r.headEvents("s0"))
	}
	var last int64
	raised := 0
	for i := range 200 {
		if i%50 == 49 {
			r.round()
		}
		v, rep := r.blockNumber(i)
		if v < last {
			t.Fatalf("read %d: head went back from %d to %d (%s)", i, last, v, rep.endpoint)
		}
		if rep.endpoint == "s1" && v == r.realHead() {
			raised++
		}
		last = v
	}
	if raised == 0 {
		t.Fatal("no answer of s1 (2 behind) was raised to the floor: the floor is not working")
	}
	t.Logf("first answer %d (bogus), then 200 answers within the lag bound and never going back; %d of s1's raised to the floor", bogus, raised)
}

// Two endpoints agreeing on a head beyond the pace confirm it when they
// outnumber the endpoints agreeing on the pool head: it becomes the pool
// head. Two against three do not.
func TestHeads_AJumpIsTakenWhenConfirmedByMoreEndpointsThanDisagree(t *testing.T) {
	t.Run("two of three", func(t *testing.T) {
		r := newHeadRig(t, 3, nil)
		r.warmUp()
		r.sims[1].SetHeadAhead(1000)
		r.sims[2].SetHeadAhead(1000)
		r.round() // s1 is alone beyond the pace when seen, s2 confirms it
		evs := r.headEvents("s1")
		if len(evs) != 2 || !strings.HasPrefix(evs[0], ">ahead: excluded: ") || !strings.HasPrefix(evs[1], fmt.Sprintf("ahead>: readmitted: head %d confirmed by s2", r.realHead()+1000)) {
			t.Fatalf("s1's head events: %q", evs)
		}
		if evs := r.headEvents("s2"); len(evs) != 0 {
			t.Fatalf("s2's head events: %q", evs)
		}
		if st := r.status(); st.MaxHead != r.realHead()+1000 {
			t.Fatalf("pool head %d, want the confirmed %d", st.MaxHead, r.realHead()+1000)
		}
		if ep := r.endpoint("s0"); !ep.LagExcluded {
			t.Fatalf("s0, 1000 behind the confirmed head: lag %d, not excluded", ep.Lag)
		}
		t.Logf("s1: %s", evs[1])
	})
	t.Run("two of five", func(t *testing.T) {
		r := newHeadRig(t, 5, nil)
		r.warmUp()
		r.sims[3].SetHeadAhead(1000)
		r.sims[4].SetHeadAhead(1000)
		r.round()
		for _, name := range []string{"s3", "s4"} {
			if _, ok := r.aheadExclusion(name); !ok {
				t.Fatalf("%s not flagged: %q", name, r.headEvents(name))
			}
		}
		if st := r.status(); st.MaxHead != r.realHead() {
			t.Fatalf("pool head %d, want %d", st.MaxHead, r.realHead())
		}
	})
}

// With no other endpoint to measure a head against, it is taken as it
// comes: a pool of one keeps working.
func TestHeads_ASingleEndpointIsNeverFlaggedAhead(t *testing.T) {
	r := newHeadRig(t, 1, nil)
	r.warmUp()
	r.sims[0].SetHeadAhead(1_000_000)
	r.round()
	if evs := r.headEvents("s0"); len(evs) != 0 {
		t.Fatalf("head events: %q", evs)
	}
	if st := r.status(); st.MaxHead != r.realHead()+1_000_000 || st.Routable != 1 {
		t.Fatalf("pool head %d routable %d", st.MaxHead, st.Routable)
	}
	rep := r.call(1, "eth_blockNumber")
	mustOK(t, rep)
}

// rpcdash is often started mid-incident: here two of three endpoints are
// stuck far behind (one stale backend behind both) and one is at the
// chain's head. At start the stuck two outvote it, but it keeps rising
// while they do not: after probes.recover rises it is readmitted, its head
// is the pool's, and the stuck ones are lagging. (Before, it stayed
// flagged for good and the stale two served every tip read.)
func TestHeads_AMajorityStuckAtStartDoesNotOutvoteTheChain(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	for _, u := range r.sims[:2] {
		u.SetHeadLag(100)
		u.SetHeadFrozen(true)
	}
	r.probeAll()
	if _, ok := r.aheadExclusion("s2"); !ok {
		t.Fatalf("s2 not flagged at start by the stuck majority: the scenario is not set (events %q)", r.headEvents("s2"))
	}
	for range 3 {
		r.round()
	}
	if x, ok := r.aheadExclusion("s2"); ok {
		t.Fatalf("s2 rose 3 times with the pool head standing still and is still flagged: %s", x)
	}
	if st := r.status(); st.MaxHead != r.realHead() {
		t.Fatalf("pool head %d, real head %d", st.MaxHead, r.realHead())
	}
	for _, name := range []string{"s0", "s1"} {
		if ep := r.endpoint(name); !ep.LagExcluded {
			t.Fatalf("%s, stuck 100 behind, is not lagging: lag %d", name, ep.Lag)
		}
	}
	for i := range 20 {
		if _, rep := r.blockNumber(i); rep.endpoint != "s2" {
			t.Fatalf("eth_blockNumber %d answered by the stuck %s", i, rep.endpoint)
		}
	}
	evs := r.headEvents("s2")
	t.Logf("s2: %q", evs[len(evs)-1])
}

// Shadows count in none of the pool head's figures: one primary and two
// shadows 20 blocks ahead of it (agreeing with each other, outnumbering
// it at start and confirming each other after) leave the pool head at the
// primary's head and the primary routable with lag 0. A shadow's own lag
// is still measured: one behind shows it.
func TestHeads_ShadowsAheadNeverSetThePoolHead(t *testing.T) {
	r := newHeadRig(t, 4, func(c *engine.Config) {
		c.Endpoints[1].Role = engine.RoleShadow
		c.Endpoints[2].Role = engine.RoleShadow
		c.Endpoints[3].Role = engine.RoleShadow
	})
	r.sims[1].SetHeadAhead(20)
	r.sims[2].SetHeadAhead(20)
	r.sims[3].SetHeadLag(8)
	r.warmUp()
	for range 3 {
		r.round()
	}
	st := r.status()
	if st.MaxHead != r.sims[0].Head() {
		t.Fatalf("pool head %d, the primary's head %d (shadows at %d)", st.MaxHead, r.sims[0].Head(), r.sims[1].Head())
	}
	if ep := r.endpoint("s0"); !ep.Routable || ep.LagExcluded || ep.Lag != 0 {
		t.Fatalf("primary s0: routable=%v lag_excluded=%v lag=%d exclusions %q", ep.Routable, ep.LagExcluded, ep.Lag, ep.Exclusions)
	}
	for i := range 10 {
		if _, rep := r.blockNumber(i); rep.endpoint != "s0" {
			t.Fatalf("eth_blockNumber answered by %s", rep.endpoint)
		}
	}
	if ep := r.endpoint("s3"); ep.Lag != 8 {
		t.Fatalf("shadow s3, 8 behind the primary: lag %d", ep.Lag)
	}
	t.Logf("pool head %d = primary s0's; shadows s1, s2 at %d; s3 lag %d", st.MaxHead, r.sims[1].Head(), r.endpoint("s3").Lag)
}

// Readmission after lag is hysteresis: probes.recover probes in a row
// within chain.max_head_lag. While it runs, the endpoint shows lag 0 and
// still excluded; the status says how far along it is (lag_in_sync of
// probe_recover), which the console shows as REJOIN k/N.
func TestHeads_CaughtUpEndpointCountsItsProbesInSync(t *testing.T) {
	r := newHeadRig(t, 2, func(c *engine.Config) { c.Probes.Recover = 3 })
	r.warmUp()
	r.sims[1].SetHeadLag(10)
	r.round()
	if ep := r.endpoint("s1"); !ep.LagExcluded || ep.LagInSync != 0 {
		t.Fatalf("10 behind: excluded %v, in sync %d", ep.LagExcluded, ep.LagInSync)
	}
	r.sims[1].SetHeadLag(0)
	var seen []string
	for range 3 {
		r.round()
		ep := r.endpoint("s1")
		seen = append(seen, fmt.Sprintf("lag %d excluded %v in sync %d/%d", ep.Lag, ep.LagExcluded, ep.LagInSync, r.status().Settings.ProbeRecover))
	}
	t.Logf("caught up: %s", strings.Join(seen, "; "))
	want := []string{"lag 0 excluded true in sync 1/3", "lag 0 excluded true in sync 2/3", "lag 0 excluded false in sync 0/3"}
	if strings.Join(seen, "; ") != strings.Join(want, "; ") {
		t.Fatalf("rounds after catching up: %v, want %v", seen, want)
	}
}

// Before the chain's pace is known, heads seen at different moments cannot
// be compared: an endpoint last seen before the pool head appeared may have
// reached it since. Seen live: every endpoint slowed by 1 s five seconds
// after start shifted the probes' phases, and two healthy endpoints were
// marked 6 blocks behind (chain.max_head_lag 5), out of routing, with panic
// routing on. A head seen after the pool head appeared still proves its lag.
func TestHeads_BeforeThePaceIsKnownAnOlderSightingProvesNoLag(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.eng.ObserveProbeHead("s0", r.sims[0].Head())
	r.clock.Advance(7 * time.Second)
	r.eng.ObserveProbeHead("s1", r.sims[1].Head())
	r.eng.ObserveProbeHead("s2", r.sims[2].Head())
	if p := r.status().HeadPace; p != 0 {
		t.Fatalf("pace %v: the test needs it unknown", p)
	}
	if ep := r.endpoint("s0"); ep.LagExcluded || ep.Lag != 0 {
		t.Fatalf("s0, seen 7 s before the pool head at an unknown pace: lag %d, excluded %v; want no lag proven (events %q)", ep.Lag, ep.LagExcluded, r.headEvents("s0"))
	}
	// s0 seen again, still at its old head, after the pool head appeared.
	r.eng.ObserveProbeHead("s0", r.sims[0].Head()-7)
	if ep := r.endpoint("s0"); !ep.LagExcluded || ep.Lag != 7 {
		t.Fatalf("s0 7 behind, seen after the pool head: lag %d, excluded %v; want 7 and excluded", ep.Lag, ep.LagExcluded)
	}
	// The pool head rises again before s0 is seen again: the lag it proved
	// stands (it showed 0 beside LAGGING).
	r.clock.Advance(time.Second)
	r.eng.ObserveProbeHead("s1", r.sims[1].Head())
	if p := r.status().HeadPace; p != 0 {
		t.Fatalf("pace %v: the test needs it unknown", p)
	}
	if ep := r.endpoint("s0"); !ep.LagExcluded || ep.Lag != 7 {
		t.Fatalf("s0 between sightings: lag %d, excluded %v; want the 7 it proved, excluded", ep.Lag, ep.LagExcluded)
	}
}

// A chain rolled back (geth's debug_setHead, anvil's evm_revert) is
// followed once the pool head has stood below the served floor for
// rollbackAfter: every endpoint agrees on the lower head, and a floor kept
// above it named a block that no longer exists (eth_getBlockByNumber of it
// null) for as long as the dev chain stood still. Within that time the
// floor holds, as it does for an endpoint a block or two behind.
func TestHeads_AChainRolledBackIsFollowedOnceThePoolAgrees(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, nil, sim.Config{Latency: fixed(time.Millisecond)})
	head := func(id int) string {
		r := h.call(id, "eth_blockNumber")
		mustOK(t, r)
		return strings.Trim(resultString(t, r), `"`)
	}
	h.sims[0].SetHeadFixed(0x100) // a dev chain: no block until a transaction
	if got := head(1); got != "0x100" {
		t.Fatalf("head %s, want 0x100", got)
	}
	h.sims[0].SetHeadFixed(0xfd) // rolled back three blocks
	if got := head(2); got != "0x100" {
		t.Fatalf("just after the rollback: head %s, want the floor 0x100 held (within chain.max_head_lag)", got)
	}
	clock.Advance(4 * time.Second)
	if got := head(3); got != "0x100" {
		t.Fatalf("4s after: head %s, want the floor 0x100 held (rollbackAfter is 5s)", got)
	}
	clock.Advance(2 * time.Second)
	for id := 4; id < 7; id++ {
		if got := head(id); got != "0xfd" {
			t.Fatalf("6s after the pool head came down: head %s, want the chain's 0xfd", got)
		}
	}
}

// behindAloneRelayed drains s0, at the head, and reads method three times:
// s1's answer, behind (at its head by valueOf), comes at once, and becomes
// the floor: one upstream request per read.
func (r *headRig) behindAloneRelayed(valueOf func(testing.TB, reply) int64, method string, params ...any) {
	t := r.t
	t.Helper()
	if err := r.eng.Drain(engine.ActorAdmin, "s0"); err != nil {
		t.Fatal(err)
	}
	before := r.upstreamCount(method)
	for i := range 3 {
		rep := r.call(10+i, method, params...)
		mustOK(t, rep)
		if rep.endpoint != "s1" || rep.attempts != 1 || valueOf(t, rep) != r.sims[1].Head() {
			t.Fatalf("s0 drained: answered by %s after %d attempts: %s; want s1's at once", rep.endpoint, rep.attempts, rep.body)
		}
	}
	if n := r.upstreamCount(method) - before; n != 3 {
		t.Fatalf("3 reads with s0 drained cost %d upstream requests, want 3", n)
	}
}

// On Solana the heads are slots, and the reason says so.
func TestHeads_AheadOnSolanaCountsSlots(t *testing.T) {
	r := newChainHeadRig(t, 3, sim.ChainSolana, nil)
	r.warmUp()
	r.sims[2].SetHeadAhead(1_000_000)
	r.probeAll()
	x, found := r.aheadExclusion("s2")
	if !found || !strings.Contains(x, "slots beyond the pool's pace") || !strings.Contains(x, "slots/s") || strings.Contains(x, "blocks") {
		t.Fatalf("s2's ahead exclusion: %q (found %v); want it counted in slots", x, found)
	}
}
