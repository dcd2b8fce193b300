package engine

import (
	"testing"
	"time"
)

// A base that gives way takes the lowest median of the last span, not the
// current one: a queue that grew slowly all along has raised the current
// median, and a base at it would loosen the guard by as much.
func TestQueueBase_GivesWayToTheLowestMedianOfTheSpan(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	var b queueBase
	// A median rising 2 ms a second for 40 s: 20 ms to 100 ms.
	for s := 0; s <= 40; s++ {
		b.note(time.Duration(20+2*s)*time.Millisecond, t0.Add(time.Duration(s)*time.Second))
	}
	now := t0.Add(40 * time.Second)
	// The last 30 s began at 20+2·10 = 40 ms; the lows are kept per 10 s,
	// so the lowest is at most one third of the span older.
	if got, whole := b.lowest(now); got < 40*time.Millisecond || got > 60*time.Millisecond || !whole {
		t.Fatalf("lowest of the last 30 s of a median rising from 20 to 100 ms: %s (whole %v), want 40–60 ms over the whole span", got, whole)
	}
	// Nothing noted for over a span: nothing to go by.
	if got, whole := b.lowest(now.Add(time.Minute)); got != 0 || whole {
		t.Fatalf("lowest a minute after the last median: %s (whole %v), want 0, not whole", got, whole)
	}
	// A lull, then one median: the span is not whole, the base holds.
	b.note(300*time.Millisecond, now.Add(time.Minute))
	if got, whole := b.lowest(now.Add(time.Minute)); got != 300*time.Millisecond || whole {
		t.Fatalf("one median after a lull: %s (whole %v), want 300ms, not whole", got, whole)
	}
}
