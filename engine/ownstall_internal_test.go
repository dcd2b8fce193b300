package engine

import (
	"testing"
	"time"
)

// A process with more to run than CPU to run it on makes every goroutine
// wait its turn, a few milliseconds at a time, where the ticker, woken
// first, is never late by as much as stallSlack: the waits add up, and an
// attempt that lost half its time to them is rpcdash's to time, not its
// endpoint's. Waits that add up to less are not.
func TestOwnStall_RunQueueWaitsAddUp(t *testing.T) {
	var m lagMonitor
	now := time.Now()
	for i := range 5 {
		m.addQueued(now.Add(-time.Duration(90-20*i)*time.Millisecond), 12*time.Millisecond)
	}
	if lost := m.lostWithin(100 * time.Millisecond); lost < 50*time.Millisecond || lost > 70*time.Millisecond {
		t.Errorf("five 12 ms run-queue waits within 100 ms: lost %s, want 60 ms", lost)
	}
	// A wait that ended before the span says nothing of it.
	if lost := m.lostWithin(5 * time.Millisecond); lost != 0 {
		t.Errorf("nothing noted in the last 5 ms: lost %s", lost)
	}
	var calm lagMonitor
	for i := range 5 {
		calm.addQueued(now.Add(-time.Duration(90-20*i)*time.Millisecond), time.Millisecond)
	}
	if lost := calm.lostWithin(100 * time.Millisecond); lost != 0 {
		t.Errorf("waits under stallSlack: lost %s, want 0 (none of stallSlack or more noted)", lost)
	}
}
