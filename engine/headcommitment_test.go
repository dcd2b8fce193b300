package engine_test

import (
	"strconv"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
)

// A Solana client reading getSlot at confirmed or processed commitment gets
// a slot about 32 ahead of the finalized one that probes and default reads
// see. Those answers are relayed as they are and never taken for the
// endpoint's head: before, the endpoint that answered was flagged ahead of
// the pool, or the others behind it, and the next default getSlot answers
// were set aside while every endpoint was asked.
func TestHeads_SolanaSlotAtAnotherCommitmentIsNoHead(t *testing.T) {
	r := newChainHeadRig(t, 3, sim.ChainSolana, nil)
	r.warmUp()
	finalized := r.realHead()

	for i, c := range []string{"processed", "confirmed", "processed", "confirmed", "processed", "confirmed"} {
		rep := r.call(i, "getSlot", map[string]string{"commitment": c})
		mustOK(t, rep)
		got, err := strconv.ParseInt(resultString(t, rep), 10, 64)
		if err != nil || got < finalized+31 {
			t.Fatalf("getSlot at %s: %s (finalized slot %d)", c, rep.body, finalized)
		}
	}
	s := r.status()
	if s.MaxHead != finalized || s.Routable != 3 {
		t.Fatalf("after confirmed and processed reads: pool head %d (finalized %d), %d of 3 routable", s.MaxHead, finalized, s.Routable)
	}
	for _, name := range r.names {
		if ep := r.endpoint(name); len(ep.Exclusions) > 0 || ep.Head != finalized {
			t.Fatalf("%s: head %d (finalized %d), exclusions %v", name, ep.Head, finalized, ep.Exclusions)
		}
	}

	before := r.upstreamCount("getSlot")
	for i := range 5 {
		rep := r.call(100+i, "getSlot")
		mustOK(t, rep)
		if got := resultString(t, rep); got != strconv.FormatInt(finalized, 10) {
			t.Fatalf("default getSlot: %s, want the finalized slot %d", got, finalized)
		}
	}
	if n := r.upstreamCount("getSlot") - before; n != 5 {
		t.Fatalf("5 default getSlot reads cost %d upstream requests, want 5 (none set aside)", n)
	}
}
