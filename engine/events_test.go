package engine

import (
	"testing"
	"time"
)

func TestEventLog_KeepsTheNewestInOrder(t *testing.T) {
	l := newEventLog(time.Now, nil)
	if got := l.since(0); len(got) != 0 {
		t.Fatalf("empty log returned %d events", len(got))
	}
	for i := 0; i < 5; i++ {
		l.add(Event{Message: "x"})
	}
	if got := l.since(2); len(got) != 3 || got[0].Seq != 3 || got[2].Seq != 5 {
		t.Fatalf("since(2) before wrapping: %d events %+v", len(got), got)
	}
	for i := 5; i < eventCapacity+10; i++ {
		l.add(Event{Message: "x"})
	}
	got := l.since(0)
	if len(got) != eventCapacity || got[0].Seq != 11 || got[len(got)-1].Seq != eventCapacity+10 {
		t.Fatalf("since(0) after wrapping: %d events, seq %d…%d", len(got), got[0].Seq, got[len(got)-1].Seq)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq != got[i-1].Seq+1 {
			t.Fatalf("out of order at %d: %d after %d", i, got[i].Seq, got[i-1].Seq)
		}
	}
	if got := l.since(eventCapacity + 8); len(got) != 2 || got[0].Seq != eventCapacity+9 {
		t.Fatalf("since near the end: %+v", got)
	}
}
