package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// asideBesideHang reads twice through s0 (at the head) and s1 (3 behind):
// the first answer is s0's and sets the floor; then s0 hangs (a timeout
// fault) and the second read's answer from s1, below the floor, is set
// aside beside s0's attempt (its hedge, or the race at s0's deadline).
// The chain stands still meanwhile (a block a minute), so that s1's answer
// is below s0's. It returns both replies and the request timeout.
func asideBesideHang(t *testing.T, chain string, hedged bool, read func(h *harness, id int) reply) (first, second reply, timeout time.Duration) {
	t.Helper()
	h := newHarness(t, func(c *engine.Config) {
		c.Chain.Kind = chain
		c.Hedge.Enabled = hedged
		c.Hedge.Delay = "20ms"
		c.Hedge.Budget = 1
	}, sim.Config{Chain: chain, Latency: fixed(time.Millisecond), BlockTime: time.Minute},
		sim.Config{Chain: chain, Latency: fixed(time.Millisecond), BlockTime: time.Minute, HeadLag: 3})
	for _, i := range []int{0, 1} {
		h.eng.ObserveProbeHead(h.sims[i].Name(), h.sims[i].Head())
	}
	first = read(h, 1)
	mustOK(t, first)
	if first.endpoint != "s0" {
		t.Fatalf("hedging %v: first read answered by %s, want s0 (s1 is 3 behind)", hedged, first.endpoint)
	}
	if err := h.eng.InjectFault(engine.ActorAdmin, "s0", engine.FaultSpec{Mode: engine.FaultTimeout}); err != nil {
		t.Fatal(err)
	}
	second = read(h, 2)
	mustOK(t, second)
	return first, second, h.eng.Config().Server.RequestTimeout
}

// The finalized block of the endpoint behind, set aside below the one
// already returned, is relayed once the primary hangs (execution.hangs),
// not at the request's deadline: it is the only finalized block there is,
// and a client of s1 alone would have had it at once. It was relayed at
// the deadline (5.0 s, hedged or not).
func TestFinality_HeldBlockIsRelayedWhenThePrimaryHangs(t *testing.T) {
	t.Parallel()
	heldRelayedBesideHang(t, sim.ChainEVM, "finalized block", blockNumberOf, func(h *harness, id int) reply {
		return h.call(id, "eth_getBlockByNumber", "finalized", false)
	})
}

// The same for a Solana answer read at a slot below one already returned
// (context.slot, readfloor.go).
func TestSolana_ContextSlotHeldIsRelayedWhenThePrimaryHangs(t *testing.T) {
	t.Parallel()
	heldRelayedBesideHang(t, sim.ChainSolana, "context.slot", contextSlotOf, func(h *harness, id int) reply {
		return h.call(id, "getBalance", solAddr)
	})
}

// heldRelayedBesideHang checks, hedged and not, that s1's answer set aside
// below s0's (what: the number valueOf reads of it) is relayed before the
// request's deadline once s0 hangs (asideBesideHang).
func heldRelayedBesideHang(t *testing.T, chain, what string, valueOf func(testing.TB, reply) int64, read func(h *harness, id int) reply) {
	t.Helper()
	for _, hedged := range []bool{true, false} {
		first, rep, timeout := asideBesideHang(t, chain, hedged, read)
		if rep.endpoint != "s1" || rep.hedged != hedged || rep.took >= timeout*4/5 {
			t.Errorf("hedging %v, s0 hung: answered by %s (hedged %v) after %s, request timeout %s; want s1's %s before the deadline", hedged, rep.endpoint, rep.hedged, rep.took, timeout, what)
			continue
		}
		if valueOf(t, rep) >= valueOf(t, first) {
			t.Fatalf("hedging %v: s1's %s %d not below s0's %d: nothing was set aside", hedged, what, valueOf(t, rep), valueOf(t, first))
		}
		t.Logf("hedging %v, s0 hung: s1's %s %d relayed after %s (s0's was %d)", hedged, what, valueOf(t, rep), rep.took.Round(time.Millisecond), valueOf(t, first))
	}
}

// lateAtTheHead is headAndBehind with breaker.cooldown at its default
// (10 s, longer than the request's 5 s) and attempt deadlines from 100 ms:
// after ten reads s0 is slowed by 1 s, past its deadline, and the latest
// block read then is s0's late answer, which it returns.
func lateAtTheHead(t *testing.T, hedged bool) (*harness, reply) {
	t.Helper()
	h := headAndBehind(t, hedged, func(c *engine.Config) {
		c.Breaker.Cooldown = 10 * time.Second
		c.Breaker.AttemptTimeoutMin = 100 * time.Millisecond
	})
	for i := range 10 {
		mustOK(t, h.call(i, "eth_getBlockByNumber", "latest", false))
	}
	h.sims[0].SetExtraLatency(time.Second)
	late := h.call(20, "eth_getBlockByNumber", "latest", false)
	mustOK(t, late)
	m := h.endpoint("s0").Methods["eth_getBlockByNumber"]
	if late.endpoint != "s0" || m.LateAnswers == 0 {
		t.Fatalf("hedging %v: s0 slowed by 1 s answered by %s after %s, s0's late answers %d (deadline %s, %s); want s0's late answer",
			hedged, late.endpoint, late.took.Round(time.Millisecond), m.LateAnswers, m.AttemptTimeout, m.AttemptTimeoutSource)
	}
	return h, late
}

// s0 at the head answered a read late (past its attempt deadline) a moment
// ago, then hangs: a late answer marks an endpoint slow, not hung, whose
// answer is worth waiting for rather than failing the read, but s1's block,
// set aside below the floor, is an answer in hand. It is relayed once s0
// has been quiet for the cold deadline, as beside a hang with no late
// answer, not at the request's deadline.
func TestLatestBlock_HeldBlockIsRelayedWhenThePrimaryHangsAfterALateAnswer(t *testing.T) {
	t.Parallel()
	for _, hedged := range []bool{true, false} {
		h, late := lateAtTheHead(t, hedged)
		h.sims[0].SetExtraLatency(0)
		h.sims[0].SetMode(sim.ModeHang)
		rep := h.call(21, "eth_getBlockByNumber", "latest", false)
		mustOK(t, rep)
		timeout := h.eng.Config().Server.RequestTimeout
		if rep.endpoint != "s1" || rep.took >= timeout*4/5 {
			t.Fatalf("hedging %v, s0 hung after a late answer: answered by %s after %s, request timeout %s; want s1's block before the deadline", hedged, rep.endpoint, rep.took.Round(time.Millisecond), timeout)
		}
		t.Logf("hedging %v, s0 hung after a late answer (%s): s1's block %d relayed after %s (s0's was %d)", hedged,
			late.took.Round(time.Millisecond), blockNumberOf(t, rep), rep.took.Round(time.Millisecond), blockNumberOf(t, late))
	}
}

// s0 at the head answered late (1 s) a moment ago and now takes 2 s; s1,
// 3 behind, answers null for s0's latest block. The null is set aside, not
// an answer in hand: s1 may just lack the block, and s0, slow but
// answering, has it. The read waits for s0's answer past the cold
// deadline, as a client of s0 would.
func TestLatestBlock_NullBesideASlowEndpointAtTheHeadWaitsForItsAnswer(t *testing.T) {
	t.Parallel()
	h, late := lateAtTheHead(t, false)
	n := blockNumberOf(t, late)
	h.sims[0].SetExtraLatency(2 * time.Second)
	rep := h.call(21, "eth_getBlockByNumber", fmt.Sprintf("0x%x", n), false)
	mustOK(t, rep)
	if rep.endpoint != "s0" || strings.Contains(string(rep.body), `"result":null`) {
		t.Fatalf("block %d, s0 slow at the head, s1 3 behind: %s from %s after %s; want s0's block", n, rep.body, rep.endpoint, rep.took.Round(time.Millisecond))
	}
	t.Logf("block %d from s0 after %s (%d attempts)", n, rep.took.Round(time.Millisecond), rep.attempts)
}
