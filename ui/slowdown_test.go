package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// A pool slowdown of a second (seen live during a hung endpoint: one every
// 10–40 s, each 1 s long) put a banner line on and took it off again: the
// whole screen moved down a line and back, twice a second at worst. The
// banner now stays, one line, saying the slowdown is over, until
// slowdownHold after its end; a new one takes the same line.
func TestView_ShortSlowdownDoesNotMoveTheScreen(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(healthySnapshot(), themes.Default(), sz[0], sz[1])
		tick := func(at time.Duration, sd *engine.SlowdownInfo) string {
			s := healthySnapshot()
			s.Time, s.Slowdown = t0.Add(at), sd
			m.onSnapshot(snapshotMsg{snap: s})
			return m.View()
		}
		sd := &engine.SlowdownInfo{Kind: "pool", Reason: "2 of 3 endpoints slow at once; deadlines passed meanwhile are not charged to any breaker, the whole pool slow together as one",
			Since: t0.Add(time.Second), Worst: 800 * time.Millisecond, Excused: 2, Last: t0.Add(time.Second)}
		quiet := tick(0, nil)
		during := tick(time.Second, sd)
		after := tick(2*time.Second, nil)
		if row(during, "ENDPOINT") == row(quiet, "ENDPOINT") {
			t.Fatalf("%d×%d: no banner line during the slowdown:\n%s", sz[0], sz[1], during)
		}
		if row(after, "ENDPOINT") != row(during, "ENDPOINT") {
			t.Errorf("%d×%d: the table moved from row %d to %d when the slowdown ended a second later:\n%s", sz[0], sz[1],
				row(during, "ENDPOINT"), row(after, "ENDPOINT"), after)
		}
		if !strings.Contains(after, "SLOWDOWN over (no deadline excused for 1s): 2 of 3 endpoints slow at once") {
			t.Errorf("%d×%d: the held banner does not say it is over, since when, and what it was, before anything is cut:\n%s", sz[0], sz[1], after)
		}
		again := tick(3*time.Second, sd)
		if row(again, "ENDPOINT") != row(during, "ENDPOINT") {
			t.Errorf("%d×%d: a second slowdown moved the table", sz[0], sz[1])
		}
		tick(3*time.Second+slowdownHold+2*time.Second, nil) // its end is seen here
		gone := tick(3*time.Second+2*slowdownHold+3*time.Second, nil)
		if strings.Contains(gone, "SLOWDOWN") {
			t.Errorf("%d×%d: the banner outlived slowdownHold after the end:\n%s", sz[0], sz[1], gone)
		}
	}
}

// row is the index of the first line of view that holds s, -1 if none.
func row(view, s string) int {
	for i, l := range strings.Split(view, "\n") {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}
