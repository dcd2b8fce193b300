package engine_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// blockNumberOf is the number of the block a reply carries.
func blockNumberOf(t testing.TB, r reply) int64 {
	t.Helper()
	var b struct{ Number string }
	if err := json.Unmarshal([]byte(resultString(t, r)), &b); err != nil || !strings.HasPrefix(b.Number, "0x") {
		t.Fatalf("not a block: %s", r.body)
	}
	v, err := strconv.ParseInt(b.Number[2:], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// laggingRig is two sims on the test clock with s1 fallen 10 blocks behind
// (chain.max_head_lag is 5) since the last probe: nothing has told rpcdash
// yet, so equals take turns and s1 is asked first within two reads.
func laggingRig(t *testing.T) *headRig {
	t.Helper()
	r := newHeadRig(t, 2, nil)
	r.warmUp()
	r.sims[1].SetHeadLag(10)
	return r
}

// s1Asked reads until s1 has been asked once (it is then known to lag, and
// out of tip-dependent reads) and returns that read's reply.
func (r *headRig) s1Asked(method string, read func(i int) reply) reply {
	r.t.Helper()
	for i := range 4 {
		before := r.sims[1].MethodCount(method)
		rep := read(i)
		if r.sims[1].MethodCount(method) > before {
			return rep
		}
	}
	r.t.Fatalf("four %s reads and s1 was never asked", method)
	return reply{}
}

// An endpoint 10 blocks behind, not yet found out by a probe, is asked for
// eth_blockNumber: its answer is set aside and the in-sync endpoint's
// relayed (a client of that endpoint alone would not have seen the chain
// go back); its lag is learnt from the answer set aside.
func TestHeadAside_LaggingHeadAnswerIsSetAside(t *testing.T) {
	r := laggingRig(t)
	rep := r.s1Asked("eth_blockNumber", func(i int) reply {
		_, rep := r.blockNumber(i) // fails on a head more than chain.max_head_lag behind
		return rep
	})
	if rep.endpoint != "s0" || rep.attempts != 2 {
		t.Fatalf("answered by %s after %d attempts: %s", rep.endpoint, rep.attempts, rep.body)
	}
	if ep := r.endpoint("s1"); !ep.LagExcluded || ep.Lag != 10 {
		t.Fatalf("s1's lag was not learnt from its answer: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
	}
	t.Logf("s1's head %d set aside, s0's %s relayed after 2 attempts", r.sims[1].Head(), resultString(t, rep))
}

// The same for the latest block: its number is the endpoint's head, seen
// passively, and a latest block from 10 blocks back is set aside.
func TestHeadAside_LaggingLatestBlockIsSetAside(t *testing.T) {
	r := laggingRig(t)
	rep := r.s1Asked("eth_getBlockByNumber", func(i int) reply {
		rep := r.call(i, "eth_getBlockByNumber", "latest", false)
		mustOK(t, rep)
		if n, real := blockNumberOf(t, rep), r.realHead(); n < real-r.lag {
			t.Fatalf("read %d: latest block %d from %s, the real head is %d (chain.max_head_lag %d)", i, n, rep.endpoint, real, r.lag)
		}
		return rep
	})
	if rep.endpoint != "s0" || rep.attempts != 2 {
		t.Fatalf("answered by %s after %d attempts: %s", rep.endpoint, rep.attempts, rep.body)
	}
	if ep := r.endpoint("s1"); !ep.LagExcluded || ep.Lag != 10 {
		t.Fatalf("s1's lag was not learnt from its latest block: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
	}
	t.Logf("s1's latest block %d set aside, s0's %d relayed after 2 attempts", r.sims[1].Head(), blockNumberOf(t, rep))
}

// An indexer polls the block after the head. It exists nowhere yet: the
// null is relayed from the first endpoint, as a direct client gets it,
// without asking the pool again.
func TestHeadAside_NullForABlockBeyondThePoolHeadIsRelayed(t *testing.T) {
	r := newHeadRig(t, 2, nil)
	r.warmUp()
	top := r.status().MaxHead
	before := r.upstreamCount("eth_getBlockByNumber")
	const polls = 10
	for i := range polls {
		rep := r.call(i, "eth_getBlockByNumber", "0x"+strconv.FormatInt(top+5, 16), false)
		mustOK(t, rep)
		if got := resultString(t, rep); got != "null" || rep.attempts != 1 {
			t.Fatalf("poll %d: %s after %d attempts", i, got, rep.attempts)
		}
	}
	if n := r.upstreamCount("eth_getBlockByNumber") - before; n != polls {
		t.Fatalf("%d polls of block %d (pool head %d) cost %d upstream requests, want %d", polls, top+5, top, n, polls)
	}
	t.Logf("%d polls of block pool head + 5: %d upstream requests", polls, r.upstreamCount("eth_getBlockByNumber")-before)
}

// The control: a block the pool head says exists, asked of an endpoint
// that lags behind it (not yet found out), comes back null there and is
// asked of the other, whose block is relayed.
func TestHeadAside_NullForABlockThePoolHasIsSetAside(t *testing.T) {
	r := laggingRig(t)
	block := r.status().MaxHead - 2 // s1 is 10 behind: null there
	rep := r.s1Asked("eth_getBlockByNumber", func(i int) reply {
		rep := r.call(i, "eth_getBlockByNumber", "0x"+strconv.FormatInt(block, 16), false)
		mustOK(t, rep)
		if n := blockNumberOf(t, rep); n != block {
			t.Fatalf("read %d: block %d for %d", i, n, block)
		}
		return rep
	})
	if rep.endpoint != "s0" || rep.attempts != 2 {
		t.Fatalf("answered by %s after %d attempts: %s", rep.endpoint, rep.attempts, rep.body)
	}
}

// When every endpoint asked answers worse than in sync (s0 fails, s1 and s2
// lag 10 and 20 blocks), the best answer set aside is relayed, whatever the
// order they came in: the head 10 behind, not the last one set aside.
func TestHeadAside_TheHighestHeadSetAsideIsRelayed(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	r.sims[0].SetMode(sim.ModeError)
	r.sims[1].SetHeadLag(10)
	r.sims[2].SetHeadLag(20)
	rep := r.call(1, "eth_blockNumber")
	mustOK(t, rep)
	want := `"0x` + strconv.FormatInt(r.sims[1].Head(), 16) + `"`
	if got := resultString(t, rep); got != want || rep.endpoint != "s1" || rep.attempts != 3 {
		t.Fatalf("%s from %s after %d attempts, want s1's %s after 3", got, rep.endpoint, rep.attempts, want)
	}
	t.Logf("s1's head %s (10 behind) relayed after 3 attempts, s2's (20 behind) set aside", want)
}

// An answer set aside while another endpoint is asked is still relayed when
// that endpoint does not answer before the request's deadline: a client of
// the first endpoint alone would have had it, not a timeout.
func TestHeadAside_AnswerSetAsideIsRelayedAtTheRequestDeadline(t *testing.T) {
	t.Parallel()
	r := newHeadRig(t, 2, func(c *engine.Config) { c.Server.RequestTimeout = time.Second })
	r.warmUp()
	r.sims[0].SetHeadLag(10)
	r.sims[1].SetMode(sim.ModeHang)
	rep := r.call(1, "eth_blockNumber")
	mustOK(t, rep)
	want := `"0x` + strconv.FormatInt(r.sims[0].Head(), 16) + `"`
	if got := resultString(t, rep); got != want || rep.endpoint != "s0" {
		t.Fatalf("%s from %s after %s, want s0's head %s (10 behind, set aside while s1 hung)", got, rep.endpoint, rep.took.Round(time.Millisecond), want)
	}
	t.Logf("s0's head %s relayed at the request deadline (%s), s1 hung", want, rep.took.Round(time.Millisecond))
}

// A null for a block the pool has, from a lagging endpoint a hedge reached,
// is set aside while the current primary is still answering: the client
// waits for that block, as a direct client of the primary would have had
// it, and is never handed the null because no endpoint is left to ask.
func TestHeadAside_NullSetAsideWaitsForTheLiveAttemptsBlock(t *testing.T) {
	t.Parallel()
	r := newHeadRig(t, 2, hedgeOn("50ms"))
	r.warmUp()
	r.sims[1].SetHeadLag(10) // not yet found out: no probe since
	// The primary's answer comes long after the hedge's null, however
	// loaded the machine.
	r.sims[0].SetMethodLatency("eth_getBlockByNumber", time.Second)
	// s1 is 10 behind: null there. The method is cold: s0 is primary.
	block := r.status().MaxHead - 2
	rep := r.call(1, "eth_getBlockByNumber", "0x"+strconv.FormatInt(block, 16), false)
	mustOK(t, rep)
	if got := resultString(t, rep); got == "null" {
		t.Fatalf("null relayed from %s after %d attempts (%s), s0 was still answering with block %d",
			rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond), block)
	}
	if n := blockNumberOf(t, rep); n != block || rep.endpoint != "s0" || !rep.hedged || rep.attempts != 2 {
		t.Fatalf("block %d from %s (hedged=%v, %d attempts), want s0's block %d after s1's hedge", n, rep.endpoint, rep.hedged, rep.attempts, block)
	}
	if n := r.sims[1].MethodCount("eth_getBlockByNumber"); n != 1 {
		t.Fatalf("s1 asked %d times, want once (the hedge)", n)
	}
	t.Logf("s1's null set aside, s0's block %d relayed after %s", block, rep.took.Round(time.Millisecond))
}
