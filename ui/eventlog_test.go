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
		more = append(more, engine.Event{Seq: uint64(6 + i), Time: t0.Add(time.Duration(i) * time.Second), Type: engine.EventFailover,
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
	m.onSnapshot(snapshotMsg{snap: healthySnapshot(), events: []engine.Event{{Seq: 9, Time: t0, Type: engine.EventPool, Actor: engine.ActorEngine, Message: "newest"}}})
	if top := firstEventRow(m); !strings.Contains(top, "newest") {
		t.Fatalf("at the top, a new event does not show first: %q", top)
	}
}

func firstEventRow(m Model) string {
	return strings.Split(m.viewEvents(100, 5), "\n")[1]
}

// Scrolled down the events, the panel's header says how many newer events
// are hidden above and which key brings them back, counting those that
// arrive while the reader stays put; at the top it says nothing of the kind.
func TestView_ScrolledEventsSayHowManyNewerAreAbove(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {100, 30}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := fixedModel(healthySnapshot(), themes.Default(), sz[0], sz[1])
			if head := eventsHead(m); strings.Contains(head, "newer") {
				t.Fatalf("at the top, the header speaks of newer events: %q", head)
			}
			m = pressKeys(m, "tab", "tab", "j", "j")
			wantNewer(t, m, 2)
			var more []engine.Event
			for i := range 3 {
				more = append(more, engine.Event{Seq: uint64(6 + i), Time: t0.Add(time.Duration(i) * time.Second), Type: engine.EventBreaker,
					Endpoint: "alchemy", From: "closed", To: "open", Actor: engine.ActorEngine, Message: fmt.Sprintf("breaker %d", i)})
			}
			m.onSnapshot(snapshotMsg{snap: healthySnapshot(), events: more})
			wantNewer(t, m, 5)
			m = pressKeys(m, "k")
			wantNewer(t, m, 4)
			m = pressKeys(m, "k", "k", "k", "k")
			if head := eventsHead(m); strings.Contains(head, "newer") {
				t.Fatalf("back at the top, the header still speaks of newer events: %q", head)
			}
			m = pressKeys(m, "j", "j", "j", "g")
			if head := eventsHead(m); strings.Contains(head, "newer") || m.evOffset != 0 {
				t.Fatalf("g: offset %d, header %q; want the top", m.evOffset, head)
			}
		})
	}
}

// The marker comes before the filter's note, so a long filter does not cut
// it at 80 columns.
func TestView_NewerEventsMarkerSurvivesAFilter(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[0].Name = "alchemy-mainnet-archive" // the widest ENDPOINT column
	m := fixedModel(s, themes.Default(), 80, 24)
	var evs []engine.Event
	for i := range 6 {
		evs = append(evs, engine.Event{Seq: uint64(6 + i), Time: t0.Add(time.Duration(i) * time.Second), Type: engine.EventFailover,
			Endpoint: "alchemy-mainnet-archive", Actor: engine.ActorEngine, Message: fmt.Sprintf("failed over %d", i)})
	}
	m.onSnapshot(snapshotMsg{snap: s, events: evs})
	m.evFilter = "alchemy-mainnet"
	m = pressKeys(m, "tab", "tab", "j", "j", "j")
	wantNewer(t, m, 3)
}

func wantNewer(t *testing.T, m Model, n int) {
	t.Helper()
	head := eventsHead(m)
	if want := fmt.Sprintf("↑ %d newer", n); !strings.Contains(head, want) || !strings.Contains(head, "(g)") {
		t.Errorf("want %q and the key (g) in the events header: %q\n%s", want, head, m.View())
	}
	if rows := strings.Split(m.View(), "\n"); len(rows) != m.height {
		t.Errorf("%d rows on a %d-row terminal", len(rows), m.height)
	}
}

// eventsHead is the events panel's column-header line as drawn.
func eventsHead(m Model) string { return lineWith(m.View(), "ACTOR") }

// A filter that matches no endpoint's events says so, not "no events yet".
func TestView_AFilterMatchingNothingSaysSo(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 100, 30)
	m.evFilter = "zzz"
	if v := m.View(); !strings.Contains(v, `no events of an endpoint whose name starts with "zzz"`) || strings.Contains(v, "no events yet") {
		t.Fatalf("filter zzz over the fixture's events:\n%s", v)
	}
}
