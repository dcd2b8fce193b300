package ui

import (
	"strings"
	"testing"
)

// Below 80×24 the screen shows only the size it needs: no key may act
// behind it, and q quits.
func TestUpdate_TooSmallTerminalTakesNoKeyButQuit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 70, 20, false)
		for _, k := range []string{"d", "y", "c", "h", "+", "-", "a", "f", "enter", "r", "enter", "y"} {
			m = press(t, m, k)
		}
		wantCalls(t, sp)
		if m.overlay != overlayNone {
			t.Fatalf("an overlay opened behind the size message: %d", m.overlay)
		}
		if v := m.View(); !strings.Contains(strings.Join(strings.Fields(v), " "), "keys are off until then; q quits") {
			t.Fatalf("view:\n%s", v)
		}
		mm, _ := m.Update(keyMsg("q"))
		if !mm.(Model).quitting {
			t.Fatal("q did not quit")
		}
		// A question open when the terminal shrank: q still quits.
		m = press(t, console(t, sp, 100, 30, false), "d")
		mm, _ = m.Update(sizeMsg(70, 20))
		mm, _ = mm.(Model).Update(keyMsg("q"))
		if !mm.(Model).quitting {
			t.Fatal("q with a hidden question did not quit")
		}
	})
}
