package ui

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Before the first Snapshot the console knows nothing of the pool: a key
// that acts must not act on zero values (+ stepped "all methods" from 0s
// to 5ms, h turned hedging on, D asked with breaker.cooldown 0s).
func TestUpdate_NoActionBeforeTheFirstSnapshot(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := New(Options{Backend: sp, Location: time.UTC, Drill: &Drill{Modes: []string{"error"}, Steps: []string{"x"}, Run: func(context.Context, string, func(DrillStep)) error { return nil }}})
		mm, _ := m.Update(sizeMsg(100, 30))
		m = mm.(Model)
		for _, k := range []string{"+", "-", "h", "a", "d", "c", "f", "r", "D"} {
			m = press(t, m, k)
			wantCalls(t, sp)
			if m.overlay != overlayNone || !m.status.err || !strings.Contains(m.status.text, "waits for the first snapshot") {
				t.Fatalf("%s before a snapshot: overlay %d, status %q", k, m.overlay, m.status.text)
			}
		}
		m = refreshed(t, m)
		m = press(t, m, "d", "y")
		wantCalls(t, sp, "Drain alpha")
	})
}

// Before the first Snapshot (an attached instance not answering yet) the
// "(all methods)" row read "off" under DELAY: hedging unknown, shown as
// turned off.
func TestView_NoHedgingStateBeforeTheFirstSnapshot(t *testing.T) {
	m := New(Options{Location: time.UTC, Source: testSource()})
	mm, _ := m.Update(sizeMsg(80, 24))
	row := lineWith(mm.(Model).View(), "(all methods)")
	if row == "" || strings.Contains(row, "off") {
		t.Fatalf("(all methods) before a snapshot: %q", row)
	}
}
