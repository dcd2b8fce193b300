package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// churn logs n events on eng's endpoint name (drains and undrains).
func churn(eng *engine.Engine, name string, n int) {
	for i := range n {
		if i%2 == 0 {
			eng.Drain(engine.ActorAdmin, name)
		} else {
			eng.Undrain(engine.ActorAdmin, name)
		}
	}
}

// newestSeq is the seq of eng's newest event.
func newestSeq(eng *engine.Engine) uint64 {
	evs := eng.Events(0)
	return evs[len(evs)-1].Seq
}

// gaps are the console's lines for events it never read.
func gaps(m Model) []engine.Event {
	var out []engine.Event
	for _, ev := range m.events {
		if ev.Type == "gap" {
			out = append(out, ev)
		}
	}
	return out
}

// unreachable is a backend that fails every refresh while down is set.
type unreachable struct {
	Backend
	down atomic.Bool
}

func (u *unreachable) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	if u.down.Load() {
		return engine.Snapshot{}, errors.New("connection refused")
	}
	return u.Backend.Snapshot(ctx)
}

func (u *unreachable) Events(ctx context.Context, after uint64) ([]engine.Event, error) {
	if u.down.Load() {
		return nil, errors.New("connection refused")
	}
	return u.Backend.Events(ctx, after)
}

// The event list polls the instance's log (its newest 2048) by seq.
// Events that left the log between two polls (the instance unreachable
// for a while, or a burst) were skipped silently: the list read as if
// nothing had happened then. A gap in seq is a line that counts them.
func TestEvents_AGapInSeqIsCountedInTheList(t *testing.T) {
	t.Run("between two refreshes", func(t *testing.T) {
		r := newRig(t, "alpha", "beta")
		churn(r.eng, "alpha", 6)
		m := console(t, Local{Engine: r.eng}, 120, 36, false)
		churn(r.eng, "alpha", 6)
		m = refreshed(t, m)
		if g := gaps(m); len(g) > 0 {
			t.Fatalf("a gap counted with none in seq: %v", g)
		}
		seen := m.lastSeq
		churn(r.eng, "alpha", engine.EventCapacity+300)
		m = refreshed(t, m)
		g := wantGap(t, m, r.eng, seen, "between two refreshes")
		// It is the newest line, where the reader is, at both sizes.
		for _, size := range [][2]int{{120, 36}, {80, 24}} {
			mm, _ := m.Update(sizeMsg(size[0], size[1]))
			top := strings.Split(mm.(Model).viewEvents(size[0], 3), "\n")[1]
			if !strings.Contains(top, strings.SplitN(g.Message, " (", 2)[0]) {
				t.Errorf("at %dx%d the events' first line is not the gap's: %q", size[0], size[1], top)
			}
		}
		// It goes down the list as events come, and stays.
		churn(r.eng, "alpha", 3)
		m = refreshed(t, m)
		if g := gaps(m); len(g) != 1 {
			t.Errorf("after 3 more events the gap's line is gone: %v", g)
		}
		// A filter on an endpoint keeps the line: the events it counts
		// may be that endpoint's.
		m.evFilter = "beta"
		if evs := m.filteredEvents(); !containsGap(evs) {
			t.Errorf("the gap's line is hidden by a filter on beta: %v", evs)
		}
	})
	t.Run("while the instance was unreachable", func(t *testing.T) {
		r := newRig(t, "alpha", "beta")
		be := &unreachable{Backend: Local{Engine: r.eng}}
		churn(r.eng, "alpha", 6)
		m := console(t, be, 120, 36, false)
		seen := m.lastSeq
		be.down.Store(true)
		m = refreshed(t, m)
		churn(r.eng, "alpha", engine.EventCapacity+10)
		be.down.Store(false)
		m = refreshed(t, m)
		wantGap(t, m, r.eng, seen, "while the console could not reach it")
		// Back in reach, the next gap is not blamed on that.
		seen = m.lastSeq
		churn(r.eng, "alpha", engine.EventCapacity+10)
		m = refreshed(t, m)
		wantGap(t, m, r.eng, seen, "between two refreshes")
	})
	t.Run("after a restart", func(t *testing.T) {
		a, b := newRig(t, "alpha", "beta"), newRig(t, "alpha", "beta")
		churn(a.eng, "alpha", 10)
		be := &switched{Backend: Local{Engine: a.eng}, next: Local{Engine: b.eng}}
		m := console(t, be, 120, 36, false)
		// The new process logs more than its log keeps before the console
		// sees it.
		churn(b.eng, "beta", engine.EventCapacity+50)
		be.after.Store(true)
		m = refreshed(t, refreshed(t, m))
		wantGap(t, m, b.eng, 0, "before the console first read it")
		for _, ev := range m.events {
			if ev.Endpoint == "alpha" && ev.Type == engine.EventDrain {
				t.Fatalf("the old instance's event %d (%s) is shown among the new one's", ev.Seq, ev.Message)
			}
		}
		if m.lastSeq != newestSeq(b.eng) {
			t.Errorf("read up to seq %d of the new instance, its newest is %d", m.lastSeq, newestSeq(b.eng))
		}
	})
}

// wantGap checks that m's event list has one line for the events after
// seq seen it does not show, the newest line, saying why, and that it
// counts them right: those that left eng's log, and those past what the
// console keeps.
func wantGap(t *testing.T, m Model, eng *engine.Engine, seen uint64, why string) engine.Event {
	t.Helper()
	g := gaps(m)
	if len(g) != 1 {
		t.Fatalf("want one line counting the events not shown, got %d: %v", len(g), g)
	}
	if last := m.events[len(m.events)-1]; last.Type != "gap" {
		t.Fatalf("the gap's line is not the newest: %v", last)
	}
	oldestShown := m.events[0].Seq
	left := newestSeq(eng) - engine.EventCapacity - seen
	want := fmt.Sprintf("%d events not shown (seq %d–%d): %d left the instance's log (it keeps its newest %d) %s",
		oldestShown-seen-1, seen+1, oldestShown-1, left, engine.EventCapacity, why)
	if !strings.HasPrefix(g[0].Message, want) {
		t.Fatalf("the gap's line:\n got %s\nwant %s…", g[0].Message, want)
	}
	if len(m.events) > maxEvents {
		t.Errorf("the console keeps %d lines, more than its %d", len(m.events), maxEvents)
	}
	return g[0]
}

func containsGap(evs []engine.Event) bool {
	for _, ev := range evs {
		if ev.Type == "gap" {
			return true
		}
	}
	return false
}

// restartsAtSnapshot is the old process until its Snapshot has been
// asked for once more, then the new one: a restart between the two calls
// of one refresh.
type restartsAtSnapshot struct {
	switched
	armed atomic.Bool
}

func (r *restartsAtSnapshot) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	s, err := r.switched.Snapshot(ctx)
	if r.armed.Load() {
		r.after.Store(true)
	}
	return s, err
}

// A refresh asked for the Snapshot, then the events after the old
// process's last seq: an instance that restarted between the two gave the
// new process's events past that seq, shown for a refresh among the old
// process's under its Snapshot (and counted as the old one's seq).
func TestEvents_ARestartWithinARefreshShowsNoEventOfTheNewInstanceAsTheOldOnes(t *testing.T) {
	a, b := newRig(t, "alpha", "beta"), newRig(t, "alpha", "beta")
	churn(a.eng, "alpha", 4)
	be := &restartsAtSnapshot{switched: switched{Backend: Local{Engine: a.eng}, next: Local{Engine: b.eng}}}
	m := console(t, be, 120, 36, false)
	churn(b.eng, "beta", int(m.lastSeq)+20)
	oldStart := m.snap.Started
	be.armed.Store(true)
	m = refreshed(t, m)
	if m.snap.Started.Equal(oldStart) {
		for _, ev := range m.events {
			if ev.Endpoint == "beta" && ev.Type == engine.EventDrain {
				t.Fatalf("the new instance's event %d (%s) is shown under the old one's snapshot", ev.Seq, ev.Message)
			}
		}
	}
	m = refreshed(t, refreshed(t, m))
	if m.snap.Started.Equal(oldStart) {
		t.Fatal("the restart was never seen")
	}
	shown := map[uint64]bool{}
	for _, ev := range m.events {
		if ev.Endpoint == "alpha" && ev.Type == engine.EventDrain {
			t.Errorf("the old instance's event %d (%s) is shown after the restart", ev.Seq, ev.Message)
		}
		shown[ev.Seq] = true
	}
	for _, ev := range b.eng.Events(0) {
		if !shown[ev.Seq] {
			t.Errorf("the new instance's event %d (%s) is not shown", ev.Seq, ev.Message)
		}
	}
}
