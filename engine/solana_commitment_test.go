package engine_test

import (
	"strconv"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

const solanaKey = "Vote111111111111111111111111111111111111111"

// solanaRig is two Solana sims on the test clock, s1 two slots behind s0
// (within chain.max_head_lag, so both serve tip reads), with no lag penalty:
// equals take turns, so s1 is asked first within two reads.
func solanaRig(t *testing.T) *headRig {
	t.Helper()
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	r.sims[1].SetHeadLag(2)
	r.probeAll()
	return r
}

// A client reads at the confirmed commitment and passes the context slot
// an earlier answer carried as minContextSlot (web3.js, @solana/kit and
// wallets do). That slot is the confirmed slot of the endpoint that gave it,
// some 32 slots above the finalized pool head: it exists. An endpoint two
// slots behind answers -32016; the read must fail over to the endpoint that
// has the slot, as a client of that endpoint alone never sees the error.
func TestSolana_MinContextSlotAtConfirmedFailsOverToTheEndpointThatHasIt(t *testing.T) {
	r := solanaRig(t)
	slot := r.sims[0].Head() + 31 // s0's confirmed slot, as its answers' context.slot says
	rep := r.s1Asked("getBalance", func(i int) reply {
		return r.call(i, "getBalance", solanaKey, map[string]any{"commitment": "confirmed", "minContextSlot": slot})
	})
	t.Logf("minContextSlot %d (pool head %d, finalized): answered by %s after %d attempts: %s", slot, r.status().MaxHead, rep.endpoint, rep.attempts, rep.body)
	mustOK(t, rep)
	if rep.endpoint != "s0" || rep.attempts != 2 {
		t.Fatalf("answered by %s after %d attempts, want s0 after 2", rep.endpoint, rep.attempts)
	}
	if failures, opened := r.failuresCounted(); failures != 0 || len(opened) > 0 {
		t.Fatalf("s1's lag was counted as a failure: %d failures, breakers not closed %v", failures, opened)
	}
}

// A confirmed slot beyond what any endpoint can have made yet is still the
// request's: relayed from the first endpoint, one upstream request per poll.
func TestSolana_MinContextSlotBeyondEveryConfirmedSlotIsTheRequests(t *testing.T) {
	r := solanaRig(t)
	top := r.status().MaxHead
	slot := top + 32 + 2*r.lag // beyond the finalized pool head + the commitment's lead + chain.max_head_lag
	before := r.upstreamCount("getBalance")
	const polls = 6
	for i := range polls {
		mustError(t, r.call(i, "getBalance", solanaKey, map[string]any{"commitment": "confirmed", "minContextSlot": slot}),
			"Minimum context slot has not been reached")
	}
	if n := r.upstreamCount("getBalance") - before; n != polls {
		t.Fatalf("%d polls of confirmed slot %d (pool head %d) cost %d upstream requests, want %d", polls, slot, top, n, polls)
	}
}

// A client reads the slot and the block height at a commitment, again and
// again (a wallet's confirmation loop, an indexer's cursor). One node never
// answers less than it already did; two endpoints a couple of slots apart,
// answer by answer, would. The finalized getSlot is a head (No time travel);
// the others must not go back either.
func TestSolana_SlotAndBlockHeightNeverGoBackAtAnyCommitment(t *testing.T) {
	for _, tc := range []struct{ method, commitment string }{
		{"getSlot", "confirmed"}, {"getSlot", "processed"},
		{"getBlockHeight", "finalized"}, {"getBlockHeight", "confirmed"}, {"getBlockHeight", "processed"},
	} {
		t.Run(tc.method+"/"+tc.commitment, func(t *testing.T) {
			r := solanaRig(t)
			var params []any
			if tc.commitment != "finalized" {
				params = []any{map[string]any{"commitment": tc.commitment}}
			}
			var highest int64
			answered := map[string]int{}
			for i := range 6 {
				rep := r.call(i, tc.method, params...)
				mustOK(t, rep)
				v, err := strconv.ParseInt(resultString(t, rep), 10, 64)
				if err != nil {
					t.Fatalf("%s: %s", err, rep.body)
				}
				answered[rep.endpoint]++
				if v < highest {
					t.Fatalf("read %d: %d from %s, after %d was returned (answered by %v)", i, v, rep.endpoint, highest, answered)
				}
				highest = v
			}
			if len(answered) != 2 {
				t.Fatalf("answered by %v: want both endpoints asked", answered)
			}
		})
	}
}

// The same at finalized: s0 has made a slot the probes have not seen yet,
// and a client read it in an answer's context.slot. The pool head, probed
// every few seconds and carried at the pace rounded down, trails it; the
// slot exists all the same, and the endpoint behind it is not the last word.
func TestSolana_MinContextSlotJustAboveThePoolHeadFailsOver(t *testing.T) {
	r := solanaRig(t)
	r.sims[0].SetHeadAhead(1) // a slot ahead of what the probes saw
	slot := r.sims[0].Head()
	rep := r.s1Asked("getBalance", func(i int) reply {
		return r.call(i, "getBalance", solanaKey, map[string]any{"minContextSlot": slot})
	})
	t.Logf("minContextSlot %d (pool head %d): answered by %s after %d attempts: %s", slot, r.status().MaxHead, rep.endpoint, rep.attempts, rep.body)
	mustOK(t, rep)
	if rep.endpoint != "s0" || rep.attempts != 2 {
		t.Fatalf("answered by %s after %d attempts, want s0 after 2", rep.endpoint, rep.attempts)
	}
}
