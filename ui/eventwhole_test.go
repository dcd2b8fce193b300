package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// An event's message wider than the events panel was cut with "…" at
// every size (at 80×24 nearly every one: "failed over: HTTP 429:
// JSON-RPC error -32005…"), and the console had no other place to read
// it. With the events focused, the one at the top (j/k choose it) is
// shown whole, wrapped under its message's column; the view keeps the
// terminal's size.
func TestView_FocusedEventsShowTheTopEventWhole(t *testing.T) {
	long := "closed→open 3 failures in a row, last: injected fault: HTTP 500; flapping: open again within 1m of closing, cooldown doubled to 20s"
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(incidentSnapshot(), themes.Default(), size[0], size[1])
		m.onSnapshot(snapshotMsg{snap: incidentSnapshot(), events: []engine.Event{
			{Seq: 6, Time: t0.Add(-time.Second), Type: engine.EventBreaker, Endpoint: "alchemy", Actor: engine.ActorEngine, Message: long},
		}})
		flat := func(m Model) string {
			return strings.Join(strings.Fields(strings.ReplaceAll(ansi.Strip(m.View()), "│", " ")), " ")
		}
		if strings.Contains(flat(m), long) {
			t.Fatalf("%dx%d: the event is whole before the events are focused; the test shows nothing", size[0], size[1])
		}
		m = press(t, m, "tab", "tab")
		if m.focus != focusEvents {
			t.Fatalf("focus %v after tab tab", m.focus)
		}
		v := ansi.Strip(m.View())
		if !strings.Contains(flat(m), long) {
			t.Errorf("%dx%d, events focused: the top event is not whole:\n%s", size[0], size[1], v)
		}
		lines := strings.Split(v, "\n")
		if len(lines) > size[1] {
			t.Errorf("%dx%d: view of %d lines", size[0], size[1], len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("%dx%d: line of %d cells: %q", size[0], size[1], w, l)
			}
		}
		// Scrolled down one, the next event is the one shown whole.
		m = press(t, m, "j")
		if strings.Contains(flat(m), long) {
			t.Errorf("%dx%d: scrolled past it, the event is still whole", size[0], size[1])
		}
	}
}
