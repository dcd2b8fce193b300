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
	clock.Advance(2 * time.Second)
	told := func() int {
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

var foldedCount = regexp.MustCompile(`^failed over (\d+) times: `)
