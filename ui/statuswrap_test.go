package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/themes"
)

// A status line longer than the terminal was cut at its end: after an
// attached instance restarted with a question open, "⚠ the question
// (drain flaky) closed, nothing sent: the attached instance restar…" at
// 80 columns, and at 120 "…: tail is no longer…", the drain it forgot cut
// off. The message is shown whole, what the restart undid first: on the
// help bar's line too, and at 80 columns on a third; the panels above
// keep their place.
func TestView_ALongStatusLineWrapsWhole(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		s := healthySnapshot()
		s.Endpoints[1].Drained, s.Routable = true, 2
		m := pressKeys(fixedModel(s, themes.Default(), sz[0], sz[1]), "d") // a question open on alchemy
		before := m.View()
		restarted := healthySnapshot()
		restarted.Started = t0.Add(-10 * time.Second)
		mm, _ := m.Update(snapshotMsg{snap: restarted})
		m = mm.(Model)
		v := m.View()
		checkFits(t, v, sz[0], sz[1])
		lines := strings.Split(ansi.Strip(v), "\n")
		bottom := strings.Join(strings.Fields(strings.Join(lines[len(lines)-3:], " ")), " ")
		for _, want := range []string{m.status.text, "infura is no longer drained", "closed, nothing sent"} {
			if !strings.Contains(bottom, want) {
				t.Errorf("%d×%d: the status lines do not show %q whole:\n%s", sz[0], sz[1], want, bottom)
			}
		}
		if first := strings.Index(m.status.text, "infura is no longer drained"); first > strings.Index(m.status.text, "closed, nothing sent") {
			t.Errorf("%d×%d: what the restart undid comes after the closed question: %q", sz[0], sz[1], m.status.text)
		}
		// The panels keep their rows: the endpoints' header line where it was.
		if at, was := lineIndex(v, "ENDPOINT"), lineIndex(before, "ENDPOINT"); at != was {
			t.Errorf("%d×%d: the endpoints' header moved from line %d to %d", sz[0], sz[1], was, at)
		}
	}
}

func lineIndex(view, s string) int {
	for i, l := range strings.Split(ansi.Strip(view), "\n") {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}
