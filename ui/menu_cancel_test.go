package ui

import (
	"testing"
)

// A menu closed with esc says so on the status line: it kept what an
// earlier action had said ("cancelled: failover drill" after the fault
// menu and the role menu were opened and closed), as if it were theirs.
func TestUpdate_AMenuClosedWithEscSaysItWasCancelled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		for _, c := range []struct {
			keys []string
			want string
		}{
			{[]string{"f", "esc"}, "cancelled: fault menu"},
			{[]string{"r", "esc"}, "cancelled: role menu"},
			{[]string{"/", "esc"}, "cancelled: events filter"},
		} {
			m = press(t, m, "d", "n") // an earlier action's word on the status line
			m = press(t, m, c.keys...)
			if m.overlay != overlayNone || m.status.text != c.want {
				t.Errorf("%v: overlay %d, status %q; want it closed, %q", c.keys, m.overlay, m.status.text, c.want)
			}
		}
		wantCalls(t, sp)
	})
}
