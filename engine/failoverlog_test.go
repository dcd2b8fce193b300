package engine_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// Failovers are folded into one event per endpoint per second. Those folded
// after the second's first event waited for that endpoint's next failover:
// in a 35-minute soak, a client's unknown method names (answered -32601, so
// failed over) left counts pending when traffic stopped, and the next
// failover, however much later, was told as "failed over N times" with its
// own cause. The events must count every failover once their second ends.
func TestEvents_FailoversFoldedIntoASecondAreToldWhenItEnds(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	// A method no endpoint knows: the first endpoint answers -32601 and it
	// goes on to the other, one failover per call, all at one instant of
	// the engine's clock; with two endpoints one of them folds some.
	const calls = 4
	for i := range calls {
		r := h.call(i+1, "vendor_noSuchMethod")
		if e := r.rpcError(); e == nil || e["code"] != float64(-32601) {
			t.Fatalf("call %d: %v; want the endpoints' -32601", i+1, e)
		}
	}
	clock.Advance(61 * time.Second) // past the minute cannot-serve failovers fold over
	told := func() int { return failoversTold(h) }
	// The engine's upkeep runs every 20 ms of real time: 3 s are ample on a
	// busy machine, and the old code never tells them.
	deadline := time.Now().Add(3 * time.Second)
	for told() < calls && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := told(); n != calls {
		t.Fatalf("failover events count %d failovers after the second ended; want %d (one per call)", n, calls)
	}
}

// failoversTold is how many failovers the failover events count.
func failoversTold(h *harness) int {
	n := 0
	for _, ev := range h.events() {
		if ev.Type != engine.EventFailover {
			continue
		}
		if m := foldedCount.FindStringSubmatch(ev.Message); m != nil {
			k, _ := strconv.Atoi(m[1])
			n += k
		} else {
			n++
		}
	}
	return n
}

var foldedCount = regexp.MustCompile(`^failed over (\d+) times`)

// A client sending method names no endpoint knows makes one failover per
// call (the first endpoint answers -32601, the next is asked). Folded once
// a second, they made 1718 of a soak's 1888 events and pushed breaker,
// fault and drain events out of the log within minutes: they fold over a
// minute, and the events still count every one.
func TestEvents_CannotServeFailoversFoldOverAMinute(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, nil, sim.Config{Latency: fixed(time.Millisecond)}, sim.Config{Latency: fixed(time.Millisecond)})
	const calls = 30
	for i := range calls {
		h.call(i+1, "junk_"+strconv.Itoa(i))
		clock.Advance(time.Second)
	}
	if code, b := h.adminDo("POST", "/v1/endpoints/s0/drain", ""); code != 200 {
		t.Fatalf("drain: HTTP %d %s", code, b)
	}
	failovers := 0
	for _, ev := range h.events() {
		if ev.Type == engine.EventFailover {
			failovers++
		}
	}
	if failovers > 2 {
		t.Fatalf("%d failover events over %d calls in 30 s; want at most one per endpoint per minute", failovers, calls)
	}
	clock.Advance(31 * time.Second)
	deadline := time.Now().Add(3 * time.Second)
	for failoversTold(h) < calls && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := failoversTold(h); n != calls {
		t.Fatalf("failover events count %d failovers once the minute ended; want %d", n, calls)
	}
	drained := false
	for _, ev := range h.events() {
		drained = drained || ev.Type == engine.EventDrain
	}
	if !drained {
		t.Fatal("the drain event is gone")
	}
}
