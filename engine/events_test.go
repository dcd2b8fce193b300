package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
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
	for i := 5; i < EventCapacity+10; i++ {
		l.add(Event{Message: "x"})
	}
	got := l.since(0)
	if len(got) != EventCapacity || got[0].Seq != 11 || got[len(got)-1].Seq != EventCapacity+10 {
		t.Fatalf("since(0) after wrapping: %d events, seq %d…%d", len(got), got[0].Seq, got[len(got)-1].Seq)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq != got[i-1].Seq+1 {
			t.Fatalf("out of order at %d: %d after %d", i, got[i].Seq, got[i-1].Seq)
		}
	}
	if got := l.since(EventCapacity + 8); len(got) != 2 || got[0].Seq != EventCapacity+9 {
		t.Fatalf("since near the end: %+v", got)
	}
}

// since takes the whole uint64 range: at or past the newest, nothing (the
// top of the range once wrapped around to "everything").
func TestEventLog_SinceAtTheTopOfTheRange(t *testing.T) {
	l := newEventLog(time.Now, nil)
	for i := 0; i < 3; i++ {
		l.add(Event{Message: "x"})
	}
	for _, after := range []uint64{3, 4, 1<<64 - 2, 1<<64 - 1} {
		if got := l.since(after); len(got) != 0 {
			t.Errorf("since(%d) = %d events, want none", after, len(got))
		}
	}
	if got := l.since(2); len(got) != 1 || got[0].Seq != 3 {
		t.Errorf("since(2) = %+v", got)
	}
}

func TestEventLog_MessagesSanitised(t *testing.T) {
	l := newEventLog(time.Now, nil)
	l.add(Event{Message: "failed over: \x1b[31m" + strings.Repeat("x", 5000)})
	got := l.since(0)[0].Message
	if len(got) > redact.MaxShown+32 || strings.Contains(got, "\x1b") {
		t.Fatalf("message of %d bytes: %.80q", len(got), got)
	}
}
