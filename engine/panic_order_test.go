package engine

import (
	"testing"
	"time"
)

// Counts of the pool reach setPanic out of order (each request counts
// before it takes the lock, and the upkeep recounts every lagPeriod): a
// count taken before a newer one may be decided after it. Such a count
// was the pool's state when it was taken, so panic routing entered on it
// is what the pool called for then, and it ends panicHold after the next
// good count, as it would have in order: the order moves the end by one
// count, no more, and holds no decision past it.
func TestPanic_ACountDecidedOutOfOrderHoldsNoDecisionPastTheNextCount(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	t0 := clock.Now()
	if e.setPanic(3, 3, t0) {
		t.Fatal("3 of 3 routable: panic routing")
	}
	// Counted a moment before t0 (one endpoint of three routable then),
	// decided after it.
	if !e.setPanic(1, 3, t0.Add(-time.Millisecond)) {
		t.Fatal("1 of 3 routable: panic routing not entered at once")
	}
	next := t0.Add(lagPeriod) // the upkeep's next count
	if !e.setPanic(3, 3, next) {
		t.Fatal("panic routing left at once: want it held for panicHold")
	}
	if !e.setPanic(3, 3, next.Add(panicHold-time.Millisecond)) {
		t.Fatal("panic routing left before panicHold of good counts")
	}
	if e.setPanic(3, 3, next.Add(panicHold)) {
		on, why, _ := e.panicInfo()
		t.Fatalf("panic routing on (%v: %s) panicHold after the next good count", on, why)
	}
}
