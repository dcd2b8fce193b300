package ui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// acts records the control calls that reach it and lets them succeed.
type acts struct {
	Backend
	snap  engine.Snapshot
	mu    sync.Mutex
	calls []string
}

func (a *acts) Snapshot(context.Context) (engine.Snapshot, error)      { return a.snap, nil }
func (a *acts) Events(context.Context, uint64) ([]engine.Event, error) { return nil, nil }

func (a *acts) note(c string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, c)
	return nil
}

func (a *acts) Drain(_ context.Context, n string) error   { return a.note("Drain " + n) }
func (a *acts) Undrain(_ context.Context, n string) error { return a.note("Undrain " + n) }
func (a *acts) ClearFault(_ context.Context, n string) error {
	return a.note("ClearFault " + n)
}
func (a *acts) SetHedge(_ context.Context, u engine.HedgeUpdate) error {
	return a.note("SetHedge " + u.Method)
}

// The screen is frozen on one instance and the attached instance
// restarted behind it with other endpoints (measured on the binary: the
// cursor on charlie, the instance back with steady, tail and flaky). d
// asked "Drain tail? tail is no longer in the pool … y would fail", and y
// drained tail: the endpoint at the cursor's row in the new pool, which
// the operator never selected and the screen did not show. A key acts on
// the pool as it is now only while that is the process the screen shows.
func TestFrozen_KeysDoNotActOnAnInstanceThatRestartedBehindTheScreen(t *testing.T) {
	be := &acts{}
	m := New(Options{Backend: be, Theme: themes.Default(), Now: fixedNow, Location: time.UTC, Source: Source{Attached: "http://127.0.0.1:8546"}})
	mm, _ := m.Update(sizeMsg(120, 36))
	m = mm.(Model)
	shown := healthySnapshot()
	m.onSnapshot(snapshotMsg{snap: shown})
	m = press(t, m, "j", "p") // infura, frozen

	restarted := healthySnapshot()
	restarted.Started = t0.Add(-time.Second)
	restarted.Endpoints = []engine.EndpointSnapshot{
		endpoint("steady", "p1", "r1", "d1", 40*time.Millisecond, 60*time.Millisecond),
		endpoint("tail", "p2", "r2", "d2", 50*time.Millisecond, 90*time.Millisecond),
		endpoint("flaky", "p3", "r3", "d3", 60*time.Millisecond, 120*time.Millisecond),
	}
	restarted.Endpoints[1].Fault = &engine.FaultInfo{Mode: engine.FaultError}
	be.snap = restarted
	m.onSnapshot(snapshotMsg{snap: restarted})

	for _, keys := range [][]string{{"d", "y"}, {"c"}, {"tab", "j", "+"}} {
		m = press(t, m, keys...)
		m = press(t, m, "esc")
	}
	if len(be.calls) > 0 {
		t.Errorf("keys on the frozen screen of the old instance acted on the new one: %v", be.calls)
	}
	if v := m.View(); !strings.Contains(v, "restarted") {
		t.Errorf("the status line does not say why nothing was done:\n%s", v)
	}
}
