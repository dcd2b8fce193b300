package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// The served floor follows the pool head down only for a chain that went
// back, not for an endpoint that was never up to it. s0 sets the floor at
// 0x100; it is drained, and s1, a block behind all along, is left: the
// pool head stands at 0xff, below the floor, for longer than rollbackAfter.
// A client of s1 alone never sees its head go back, nor one of s0 alone; one
// of rpcdash was handed 0xff after 0x100 (chaos seed 1: after a 4 s stall
// of rpcdash, the one endpoint answering a block behind).
func TestHeadFloor_ALaggingEndpointLeftAloneDoesNotTakeTheHeadBack(t *testing.T) {
	h, clock, head := headFloorHarness(t, 2)
	floorFromS0ThenS1Alone(t, h, head)
	for id, step := range []time.Duration{3 * time.Second, 3 * time.Second, 10 * time.Second} {
		clock.Advance(step)
		h.eng.ObserveProbeHead("s1", 0xff)
		if got := head(3 + id); got != "0x100" {
			t.Fatalf("read %d from s1, the pool head 0xff below the floor: head %s, want the floor 0x100 (s1 never went back)", id+3, got)
		}
	}
}

// A chain rolled back under several endpoints is followed: each of them
// went back itself, and the floor follows the pool head down after
// rollbackAfter, as it does for a single dev node.
func TestHeadFloor_AChainRolledBackUnderEveryEndpointIsFollowed(t *testing.T) {
	h, clock, head := headFloorHarness(t, 2)
	h.sims[0].SetHeadFixed(0x100)
	h.sims[1].SetHeadFixed(0xff)
	h.eng.ObserveProbeHead("s0", 0x100)
	h.eng.ObserveProbeHead("s1", 0xff)
	if got := head(1); got != "0x100" {
		t.Fatalf("head %s, want 0x100", got)
	}
	h.sims[0].SetHeadFixed(0xfc)
	h.sims[1].SetHeadFixed(0xfc)
	h.eng.ObserveProbeHead("s0", 0xfc)
	h.eng.ObserveProbeHead("s1", 0xfc)
	if got := head(2); got != "0x100" {
		t.Fatalf("just after the rollback: head %s, want the floor 0x100 held", got)
	}
	clock.Advance(6 * time.Second)
	for id := 3; id < 6; id++ {
		if got := head(id); got != "0xfc" {
			t.Fatalf("6s after the rollback: head %s, want the chain's 0xfc", got)
		}
	}
}

// A pool head held below the floor for long by an endpoint that never went
// back, which then goes back a block for one sighting (a slow attempt's
// answer, older than the head seen before it), and again 6 s later, has
// not stood there rollbackAfter since it went back: the floor holds until
// one fall has lasted rollbackAfter.
func TestHeadFloor_AFallIsFollowedOnlyOnceItHasLastedRollbackAfter(t *testing.T) {
	h, clock, head := headFloorHarness(t, 2)
	floorFromS0ThenS1Alone(t, h, head)
	fall := func(id int, why string) {
		t.Helper()
		h.sims[1].SetHeadFixed(0xfe)
		h.eng.ObserveProbeHead("s1", 0xfe)
		if got := head(id); got != "0x100" {
			t.Fatalf("just after s1 went back a block (%s): head %s, want the floor 0x100", why, got)
		}
	}
	clock.Advance(10 * time.Second)
	fall(3, "10s below the floor")
	h.sims[1].SetHeadFixed(0xff) // the next sighting is the head before it again
	h.eng.ObserveProbeHead("s1", 0xff)
	clock.Advance(6 * time.Second)
	fall(4, "again, 6s after it first did")
	clock.Advance(6 * time.Second)
	if got := head(5); got != "0xfe" {
		t.Fatalf("6s after s1 went back and stayed back: head %s, want 0xfe (the chain went back under it)", got)
	}
}

// An endpoint flagged ahead at a bogus head and readmitted at the chain's
// head never went back from a head of the chain: left alone a block below
// the floor, it does not take the floor down with it.
func TestHeadFloor_ComingDownFromABogusHeadIsNoRollback(t *testing.T) {
	h, clock, head := headFloorHarness(t, 3)
	h.sims[0].SetHeadFixed(0x100)
	h.sims[1].SetHeadFixed(0xff)
	h.sims[2].SetHeadFixed(0x100)
	h.eng.ObserveProbeHead("s0", 0x100)
	h.eng.ObserveProbeHead("s1", 0x7fffffff)
	h.eng.ObserveProbeHead("s2", 0x100)
	if ep := h.endpoint("s1"); len(ep.Exclusions) == 0 {
		t.Fatalf("s1 at a bogus head: exclusions %v, want it flagged ahead", ep.Exclusions)
	}
	h.eng.ObserveProbeHead("s1", 0xff)
	if ep := h.endpoint("s1"); len(ep.Exclusions) != 0 {
		t.Fatalf("s1 back at the chain's head: exclusions %v, want none", ep.Exclusions)
	}
	leaveS1Alone(t, h, head, "s1", "s2")
	clock.Advance(6 * time.Second)
	if got := head(3); got != "0x100" {
		t.Fatalf("6s later: head %s, want the floor 0x100 (s1 only came down from a bogus head)", got)
	}
}

// headFloorHarness is n endpoints answering in 1 ms on a test clock, and
// head, a client's eth_blockNumber (its id id) through the engine.
func headFloorHarness(t *testing.T, n int) (*harness, *testutil.Clock, func(id int) string) {
	t.Helper()
	clock := testutil.NewClock(testutil.Epoch)
	sims := make([]sim.Config, n)
	for i := range sims {
		sims[i] = sim.Config{Latency: fixed(time.Millisecond)}
	}
	h := newClockedHarness(t, clock, nil, sims...)
	head := func(id int) string {
		t.Helper()
		r := h.call(id, "eth_blockNumber")
		mustOK(t, r)
		return strings.Trim(resultString(t, r), `"`)
	}
	return h, clock, head
}

// floorFromS0ThenS1Alone has s0 set the served floor at 0x100 (requests 1
// and 2), then leaves s1, a block behind at 0xff, the only endpoint
// answering.
func floorFromS0ThenS1Alone(t *testing.T, h *harness, head func(int) string) {
	t.Helper()
	h.sims[0].SetHeadFixed(0x100)
	h.sims[1].SetHeadFixed(0xff)
	h.eng.ObserveProbeHead("s0", 0x100)
	h.eng.ObserveProbeHead("s1", 0xff)
	leaveS1Alone(t, h, head, "s1")
}

// leaveS1Alone reads the head from s0 with the others drained (request 1,
// the floor 0x100), then drains s0 and lets s1 back in, the only endpoint
// answering (request 2, the floor held).
func leaveS1Alone(t *testing.T, h *harness, head func(int) string, drained ...string) {
	t.Helper()
	for _, name := range drained {
		if err := h.eng.Drain(engine.ActorAdmin, name); err != nil {
			t.Fatal(err)
		}
	}
	if got := head(1); got != "0x100" {
		t.Fatalf("from s0: head %s, want 0x100", got)
	}
	if err := h.eng.Undrain(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Drain(engine.ActorAdmin, "s0"); err != nil {
		t.Fatal(err)
	}
	if got := head(2); got != "0x100" {
		t.Fatalf("from s1 just after s0 was drained: head %s, want the floor 0x100", got)
	}
}
