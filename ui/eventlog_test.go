package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Scrolled down the events, the operator keeps reading the same lines
// while new events arrive on top; at the top, new events show.
func TestUpdate_ScrolledEventsStayPutWhenNewOnesArrive(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 100, 30)
	m = pressKeys(m, "tab", "tab", "j", "j")
	before := firstEventRow(m)
	more := []engine.Event{}
	for i := range 3 {
		more = append(more, engine.Event{Seq: uint64(10 + i), Time: t0.Add(time.Duration(i) * time.Second), Type: engine.EventFailover,
			Endpoint: "alchemy", Actor: engine.ActorEngine, Message: fmt.Sprintf("new event %d", i)})
	}
	m.onSnapshot(snapshotMsg{snap: healthySnapshot(), events: more})
	if after := firstEventRow(m); after != before {
		t.Fatalf("the scrolled events moved under the reader:\nbefore %q\nafter  %q", before, after)
	}
	m = pressKeys(m, "k", "k", "k", "k", "k", "k")
	if top := firstEventRow(m); !strings.Contains(top, "new event 2") {
		t.Fatalf("scrolled back to the top, the newest event is not first: %q", top)
	}
	m.onSnapshot(snapshotMsg{snap: healthySnapshot(), events: []engine.Event{{Seq: 20, Time: t0, Type: engine.EventPool, Actor: engine.ActorEngine, Message: "newest"}}})
	if top := firstEventRow(m); !strings.Contains(top, "newest") {
		t.Fatalf("at the top, a new event does not show first: %q", top)
	}
}

func firstEventRow(m Model) string {
	return strings.Split(m.viewEvents(100, 5), "\n")[1]
}
