package ui

import (
	"context"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/engine"
)

// countingBackend answers every Snapshot at once with snap and every
// Events call with the events after its seq, counting the Snapshots.
type countingBackend struct {
	Backend
	snap   engine.Snapshot
	events []engine.Event
	mu     sync.Mutex
	snaps  int
}

func (c *countingBackend) Snapshot(context.Context) (engine.Snapshot, error) {
	c.mu.Lock()
	c.snaps++
	c.mu.Unlock()
	return c.snap, nil
}

func (c *countingBackend) Events(_ context.Context, after uint64) ([]engine.Event, error) {
	var out []engine.Event
	for _, ev := range c.events {
		if ev.Seq > after {
			out = append(out, ev)
		}
	}
	return out, nil
}

// run calls cmd and the commands of its batches, once each, and returns
// the messages they give (a tick's sleeps Options.Refresh).
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, run(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

// An attached instance slower than ui.refresh (a loaded admin API 1 s
// away, the console refreshing every 250ms): the first tick came while
// the first refresh was still in flight, and started a second, because
// Init marked the first on a copy of the model that Bubble Tea throws
// away. Both asked for the events after 0, so the instance's events were
// shown twice (4 events, 8 lines, measured on the binary behind a proxy
// delaying /v1/status by 1s), and the two refreshes went on overlapping
// from then on (2 in flight at the proxy, every second).
func TestRefresh_FirstTickWhileTheFirstRefreshIsInFlightStartsNoSecond(t *testing.T) {
	evs := []engine.Event{{Seq: 1, Type: "pool", Actor: engine.ActorEngine, Message: "one"},
		{Seq: 2, Type: "pool", Actor: engine.ActorEngine, Message: "two"}}
	be := &countingBackend{snap: healthySnapshot(), events: evs}
	m := New(Options{Backend: be, Refresh: time.Millisecond, Location: time.UTC, Now: fixedNow})
	mm, _ := m.Update(sizeMsg(120, 36))
	m = mm.(Model)

	// As tea.Program does: Init on the model it holds, then every message
	// to that same value.
	initCmd := m.Init()
	mm, tickCmd := m.Update(tickMsg(fixedNow())) // the first tick, before any answer
	m = mm.(Model)
	for _, msg := range append(run(initCmd), run(tickCmd)...) {
		if _, ok := msg.(snapshotMsg); ok {
			mm, _ = m.Update(msg)
			m = mm.(Model)
		}
	}
	if be.snaps != 1 {
		t.Errorf("%d refreshes in flight at once, want 1", be.snaps)
	}
	if len(m.events) != len(evs) {
		t.Errorf("the console holds %d events, the instance %d: %+v", len(m.events), len(evs), m.events)
	}
}
