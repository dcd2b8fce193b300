package engine

import (
	"testing"
	"time"
)

// The pace is the median rate between rises of the pool head: a stretch
// where the chain stood still is one slow sample, so the rises right after
// it are not taken for jumps.
func TestPace_AStallIsOneSlowSampleNotTheAverage(t *testing.T) {
	var h headTracker
	at := int64(0)
	head := int64(1000)
	rise := func(blocks int64, after time.Duration) {
		at += int64(after)
		head += blocks
		h.mark(head, at)
	}
	for range 10 {
		rise(2, time.Second)
	}
	if got := h.blocksPerSecond(); got != 2 {
		t.Fatalf("pace %v, want 2 blocks/s", got)
	}
	rise(2, 90*time.Second) // the chain stood still for 89 s
	if got := h.blocksPerSecond(); got != 2 {
		t.Fatalf("pace after a stall %v, want still 2 blocks/s (the window's average would say %.2f)", got, float64(22)/100)
	}
	if got := h.carried(int64(3 * time.Second)); got != 6 {
		t.Fatalf("3 s carried at the pace: %d blocks, want 6", got)
	}
}
