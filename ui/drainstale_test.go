package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Attached to an instance that stopped answering, the drain question said
// "(STALE: the engine has not answered for 3s; these figures are its last
// answer, 4s old …)" as it was opened, and still said it while the header
// went STALE 4s … 16s. Its ages follow the clock on every tick, and its
// "not answered for" is the header's STALE figure.
func TestDrain_StaleNoteFollowsTheHeadersAge(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		clock := t0
		m := New(Options{Location: time.UTC, Now: func() time.Time { return clock }})
		mm, _ := m.Update(sizeMsg(sz[0], sz[1]))
		m = mm.(Model)
		m.onSnapshot(snapshotMsg{snap: healthySnapshot()}) // answered at t0
		clock = clock.Add(time.Second)
		mm, _ = m.Update(snapshotMsg{err: errUnreachable}) // the next refresh, unanswered
		m = mm.(Model)
		for i, stale := range []int{3, 4, 16} {
			clock = t0.Add(time.Duration(1+stale) * time.Second)
			mm, _ = m.Update(tickMsg(clock))
			m = mm.(Model)
			if i == 0 {
				m = pressKeys(m, "d") // asked while stale, as seen live
			}
			v := m.View()
			question := strings.Join(boxLines(v), " ")
			want := fmt.Sprintf("has not answered for %ds; these figures are its last answer, %ds old,", stale, stale+1)
			if !strings.Contains(question, want) {
				t.Errorf("%dx%d, %ds unanswered: the question does not say %q:\n%s", sz[0], sz[1], stale, want, question)
			}
			if head := ansi.Strip(strings.Join(m.headerLines(), "\n")); !strings.Contains(head, fmt.Sprintf("STALE %ds ", stale)) {
				t.Errorf("%dx%d: header %q, want STALE %ds", sz[0], sz[1], head, stale)
			}
			checkFits(t, v, sz[0], sz[1])
		}
	}
}
