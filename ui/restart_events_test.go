package ui

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// switched is a backend that is one engine, then (a restart behind the
// same admin address) another.
type switched struct {
	Backend
	next  Backend
	after atomic.Bool
}

func (s *switched) now() Backend {
	if s.after.Load() {
		return s.next
	}
	return s.Backend
}

func (s *switched) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	return s.now().Snapshot(ctx)
}

func (s *switched) Events(ctx context.Context, after uint64) ([]engine.Event, error) {
	return s.now().Events(ctx, after)
}

// Attached to an instance that restarted, the console asked the new one
// for its events after the old one's last sequence number: the new
// instance's first events (its drains, its independence warnings) were
// never shown, and the cursor jumped past them for good.
func TestEvents_ARestartedInstanceShowsAllItsEvents(t *testing.T) {
	a, b := newRig(t, "alpha", "beta"), newRig(t, "alpha", "beta")
	for range 3 {
		a.eng.Drain(engine.ActorAdmin, "alpha")
		a.eng.Undrain(engine.ActorAdmin, "alpha")
	}
	be := &switched{Backend: Local{Engine: a.eng}, next: Local{Engine: b.eng}}
	m := console(t, be, 120, 36, false)
	seen := m.lastSeq
	for i := 0; uint64(len(b.eng.Events(0))) <= seen+2; i++ {
		if i%2 == 0 {
			b.eng.Drain(engine.ActorAdmin, "beta")
		} else {
			b.eng.Undrain(engine.ActorAdmin, "beta")
		}
	}
	be.after.Store(true)
	m = refreshed(t, refreshed(t, m))
	shown := map[uint64]bool{}
	for _, ev := range m.events {
		shown[ev.Seq] = true
	}
	for _, ev := range b.eng.Events(0) {
		if ev.Seq <= m.lastSeq && !shown[ev.Seq] {
			t.Errorf("the restarted instance's event %d (%s %s) is not in the console's log", ev.Seq, ev.Type, ev.Message)
		}
	}
}
