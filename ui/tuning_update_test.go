package ui

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// The tuning view's keys through Update, on both backends, with the
// control calls observed: t opens it on a method row, enter asks and then
// applies the highlighted row to that method (an event by the console,
// carrying the forecast), a returns the method to auto, esc leaves.
func TestUpdate_TuningViewAppliesRowsAndLeaves(t *testing.T) {
	for _, name := range []string{"in-process", "attached"} {
		t.Run(name, func(t *testing.T) {
			// A spread distribution, so that the candidates differ.
			r := newRigWith(t, sim.Latency{Median: 20 * time.Millisecond, Sigma: 0.5}, "alpha", "beta", "gamma")
			r.read(t, 60, "eth_getBalance")
			testTuningKeys(t, r, &spy{Backend: r.backends(t)[name]})
		})
	}
}

func testTuningKeys(t *testing.T, r *rig, sp *spy) {
	{
		m := console(t, sp, 120, 36, false)
		m = press(t, m, "t") // the "(all methods)" row: nothing to tune
		if m.overlay != overlayNone || !m.status.err || !strings.Contains(m.status.text, "choose a method row") {
			t.Fatalf("t on all methods: overlay %v, status %q", m.overlay, m.status.text)
		}
		m = press(t, m, "tab", "down", "t")
		if m.overlay != overlayTuning || !m.tuning.have || len(m.tuning.rows) < 5 {
			t.Fatalf("t on eth_getBalance: overlay %v, have %v, %d rows, err %v", m.overlay, m.tuning.have, len(m.tuning.rows), m.tuning.err)
		}
		if v := m.View(); !strings.Contains(v, "Hedge tuning · eth_getBalance") || !strings.Contains(v, "◀ now") {
			t.Fatalf("view:\n%s", v)
		}
		m = press(t, m, "enter") // the current row: nothing to apply
		if m.overlay != overlayTuning || !strings.Contains(m.status.text, "runs with now") {
			t.Fatalf("enter on the current row: overlay %v, status %q", m.overlay, m.status.text)
		}
		wantCalls(t, sp)

		// The first round value: a fixed delay.
		i := slices.IndexFunc(m.tuning.rows, func(r tuningRow) bool { return !r.policy.current && !r.policy.off && r.policy.quantile == 0 })
		if i < 0 {
			t.Fatalf("no round value among %d rows", len(m.tuning.rows))
		}
		row := m.tuning.rows[i]
		for range i {
			m = press(t, m, "down")
		}
		if m.tuning.cursor != i {
			t.Fatalf("cursor %d, want %d", m.tuning.cursor, i)
		}
		m = press(t, m, "enter")
		if m.overlay != overlayConfirm || !strings.Contains(m.confirm.question, "The model predicts") || !strings.Contains(m.View(), "Set the hedge delay of eth_getBalance") {
			t.Fatalf("enter did not ask:\n%s", m.View())
		}
		m = press(t, m, "n")
		if m.overlay != overlayTuning {
			t.Fatalf("n left the view: overlay %v", m.overlay)
		}
		m = press(t, m, "enter", "q") // q is no too, and quits nothing
		if m.overlay != overlayTuning || m.quitting {
			t.Fatalf("q at the question left the view: overlay %v, quitting %v", m.overlay, m.quitting)
		}
		wantCalls(t, sp)
		m = press(t, m, "enter", "y")
		wantCalls(t, sp, "SetHedge delay="+row.policy.delay+" method=eth_getBalance")
		if m.overlay != overlayTuning {
			t.Fatalf("after applying: overlay %v", m.overlay)
		}
		ev := lastEvent(t, r)
		if ev.Type != engine.EventConfig || ev.Actor != engine.ActorConsole || !strings.Contains(ev.Message, "forecast p99") {
			t.Fatalf("engine event %+v", ev)
		}
		if tr := m.tuning.dist.Trial; tr == nil || tr.DelaySource != "live" {
			t.Fatalf("no trial after the change: %+v", tr)
		}
		if v := m.View(); !strings.Contains(v, "since the change") {
			t.Fatalf("the view does not show the change:\n%s", v)
		}
		// An auto row sets the method's quantile too.
		j := slices.IndexFunc(m.tuning.rows, func(r tuningRow) bool { return r.policy.quantile > 0 })
		m.tuning.cursor = j
		q := m.tuning.rows[j].policy.quantile
		m = press(t, m, "enter", "y")
		wantCalls(t, sp, "SetHedge delay=auto method=eth_getBalance quantile="+trimFloat(q))
		// The hedging-off row turns the method's hedging off, after asking.
		k := slices.IndexFunc(m.tuning.rows, func(r tuningRow) bool { return r.policy.off })
		if k < 0 {
			t.Fatalf("no hedging-off row among %d rows", len(m.tuning.rows))
		}
		m.tuning.cursor = k
		m = press(t, m, "enter")
		if m.overlay != overlayConfirm || !strings.Contains(m.confirm.question, "Turn hedging of eth_getBalance off? The model predicts: p99") {
			t.Fatalf("enter on hedging off did not ask:\n%s", m.View())
		}
		m = press(t, m, "y")
		wantCalls(t, sp, "SetHedge enabled=false method=eth_getBalance")
		if h := m.snap.Methods["eth_getBalance"].Hedge; h == nil || h.Enabled {
			t.Fatalf("after hedging off: %+v", h)
		}
		m = press(t, m, "a")
		wantCalls(t, sp, "SetHedge delay=auto method=eth_getBalance quantile=0.95")
		if h := m.snap.Methods["eth_getBalance"].Hedge; h.DelaySource != "auto" && h.DelaySource != "cold" {
			t.Fatalf("after a: %+v", h)
		}
		m = press(t, m, "esc")
		if m.overlay != overlayNone {
			t.Fatalf("esc: overlay %v", m.overlay)
		}
		m = press(t, m, "t", "q") // q leaves the view as esc does
		if m.overlay != overlayNone || m.quitting {
			t.Fatalf("q in the view: overlay %v, quitting %v", m.overlay, m.quitting)
		}
		wantCalls(t, sp)
	}
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// A write has nothing to tune; a read-only console shows the view but
// applies nothing.
func TestUpdate_TuningViewRefusesWhatItMustNot(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	r.read(t, 30, "eth_getBalance")
	r.read(t, 2, "eth_sendRawTransaction")
	sp := &spy{Backend: Local{Engine: r.eng}}
	m := console(t, sp, 120, 36, false)
	m = press(t, m, "tab", "down", "down", "t") // eth_sendRawTransaction
	if m.overlay != overlayNone || !strings.Contains(m.status.text, "never hedged") {
		t.Fatalf("t on a write: overlay %v, status %q", m.overlay, m.status.text)
	}
	ro := console(t, sp, 120, 36, true)
	ro = press(t, ro, "tab", "down", "t")
	if ro.overlay != overlayTuning || !ro.tuning.have {
		t.Fatalf("read-only: the view should open: overlay %v", ro.overlay)
	}
	ro = press(t, ro, "down", "enter")
	ro = press(t, ro, "a")
	if ro.overlay != overlayTuning || !strings.Contains(ro.status.text, "read-only") {
		t.Fatalf("read-only: overlay %v, status %q", ro.overlay, ro.status.text)
	}
	wantCalls(t, sp)
}

// The open view asks again at most every tuningRefresh, and not while a
// fetch is in flight or the screen is frozen.
func TestUpdate_TuningViewRefreshesOnTicksAtItsOwnPace(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	r.read(t, 30, "eth_getBalance")
	m := console(t, Local{Engine: r.eng}, 120, 36, false)
	m = press(t, m, "tab", "down", "t")
	if cmd := m.fetchTuning(false); cmd != nil {
		t.Fatal("a fetch right after the last one")
	}
	m.tuning.fetchedAt = m.tuning.fetchedAt.Add(-tuningRefresh)
	if cmd := m.fetchTuning(false); cmd == nil || !m.tuning.fetching {
		t.Fatal("no fetch after tuningRefresh")
	}
	if cmd := m.fetchTuning(true); cmd != nil {
		t.Fatal("a second fetch while one is in flight")
	}
	m.tuning.fetching, m.frozen = false, true
	if cmd := m.fetchTuning(true); cmd != nil {
		t.Fatal("a fetch while frozen")
	}
	// An answer for a view closed since is dropped.
	m.frozen = false
	m.tuning.method = "eth_call"
	before := m.tuning
	m.onTuning(tuningMsg{method: "eth_getBalance"})
	if m.tuning.method != before.method || m.tuning.have != before.have {
		t.Fatal("a stale answer changed the view")
	}
}

// A refresh keeps the highlight on the candidate chosen, wherever the rows
// moved; a view opened while the screen is frozen still gets its data.
func TestUpdate_TuningViewKeepsTheChosenRowAndOpensWhenFrozen(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	r.read(t, 30, "eth_getBalance")
	m := console(t, Local{Engine: r.eng}, 120, 36, false)
	m = press(t, m, "tab", "down")
	m.frozen = true
	m = press(t, m, "t") // press runs the fetch and delivers its answer
	if !m.tuning.have || len(m.tuning.rows) == 0 {
		t.Fatal("a view opened while frozen got no data: it would say it is reading forever")
	}
	m.frozen = false
	m.onTuning(tuningMsg{method: m.tuning.method, rows: []tuningRow{{spec: "current"}, {spec: "auto:0.9"}, {spec: "50ms"}}})
	m.tuning.cursor = 1 // auto:0.9
	m.onTuning(tuningMsg{method: m.tuning.method, rows: []tuningRow{{spec: "current"}, {spec: "auto:0.8"}, {spec: "auto:0.9"}, {spec: "50ms"}}})
	if got := m.tuning.rows[m.tuning.cursor].spec; got != "auto:0.9" {
		t.Fatalf("after a refresh the highlight is on %q, not on the candidate chosen (auto:0.9)", got)
	}
}
