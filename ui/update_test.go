package ui

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Each key and action through Update, with the control calls it makes
// observed, on both backends: the engine in process and the same engine
// attached over its admin API. The engine's own event log must name the
// console as the actor either way.

func forEachBackend(t *testing.T, fn func(t *testing.T, r *rig, sp *spy)) {
	for _, name := range []string{"in-process", "attached"} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, "alpha", "beta", "gamma")
			r.read(t, 3, "eth_getBalance")
			r.read(t, 2, "eth_sendRawTransaction")
			fn(t, r, &spy{Backend: r.backends(t)[name]})
		})
	}
}

func wantCalls(t *testing.T, sp *spy, want ...string) {
	t.Helper()
	if got := sp.take(); !slices.Equal(got, want) {
		t.Fatalf("control calls %q, want %q", got, want)
	}
}

func lastEvent(t *testing.T, r *rig) engine.Event {
	t.Helper()
	evs := r.eng.Events(0)
	return evs[len(evs)-1]
}

func TestUpdate_DrainAsksThenDrainsAndUndrains(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "d")
		if m.overlay != overlayConfirm || !strings.Contains(m.View(), "Drain alpha?") {
			t.Fatalf("d did not ask:\n%s", m.View())
		}
		wantCalls(t, sp)
		m = press(t, m, "n") // the default is no
		wantCalls(t, sp)
		m = press(t, m, "d", "enter") // enter is no, too
		wantCalls(t, sp)
		m = press(t, m, "d", "y")
		wantCalls(t, sp, "Drain alpha")
		if ev := lastEvent(t, r); ev.Type != engine.EventDrain || ev.Actor != engine.ActorConsole {
			t.Fatalf("engine event %+v", ev)
		}
		if !m.snap.Endpoints[0].Drained || !strings.Contains(m.View(), "DRAINED") || !strings.Contains(m.status.text, "✓ drain alpha") {
			t.Fatalf("the screen does not show the drain:\n%s", m.View())
		}
		m = press(t, m, "d") // undrain needs no confirmation
		wantCalls(t, sp, "Undrain alpha")
		if m.snap.Endpoints[0].Drained {
			t.Fatal("still drained")
		}
	})
}

func TestUpdate_FaultMenuInjectsWithADurationAndClearClears(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "f") // beta
		if m.overlay != overlayFault || !strings.Contains(m.View(), "Inject a fault on beta") {
			t.Fatalf("no fault menu:\n%s", m.View())
		}
		m = press(t, m, "right", "down", "left", "down", "down", "left", "enter") // mode error, rate 50%, duration 30s
		if m.overlay != overlayConfirm || !strings.Contains(m.confirm.question, "error fault on beta") || !strings.Contains(m.confirm.question, "50% of") {
			t.Fatalf("no confirmation saying what will happen: %q", m.confirm.question)
		}
		wantCalls(t, sp)
		m = press(t, m, "y")
		wantCalls(t, sp, "InjectFault beta error rate=0.5 latency=0s duration=30s")
		f := m.snap.Endpoints[1].Fault
		if f == nil || f.Mode != engine.FaultError || f.Expires.IsZero() {
			t.Fatalf("fault on screen %+v", f)
		}
		if ev := lastEvent(t, r); ev.Type != engine.EventFault || ev.Actor != engine.ActorConsole {
			t.Fatalf("engine event %+v", ev)
		}
		m = press(t, m, "c")
		wantCalls(t, sp, "ClearFault beta")
		if m.snap.Endpoints[1].Fault != nil {
			t.Fatal("fault still shown")
		}
		m = press(t, m, "c") // nothing to clear: no call
		wantCalls(t, sp)
		m = press(t, m, "f", "esc")
		if m.overlay != overlayNone {
			t.Fatal("esc did not close the fault menu")
		}
		wantCalls(t, sp)
	})
}

func TestUpdate_HedgingOffAsksOnDoesNot(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "h")
		if m.overlay != overlayConfirm || !strings.Contains(m.confirm.question, "hedging off") {
			t.Fatalf("h did not ask: %q", m.confirm.question)
		}
		m = press(t, m, "y")
		wantCalls(t, sp, "SetHedge enabled=false all")
		if m.snap.Hedge.Enabled || !strings.Contains(m.View(), "hedging OFF") {
			t.Fatal("hedging still shown on")
		}
		m = press(t, m, "h")
		wantCalls(t, sp, "SetHedge enabled=true all")
		if !m.snap.Hedge.Enabled {
			t.Fatal("hedging still off")
		}
	})
}

func TestUpdate_DelayKeysActOnTheSelectedMethodOrAll(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "tab") // methods panel, "(all methods)" row
		if m.focus != focusMethods {
			t.Fatal("tab did not move to the methods panel")
		}
		m = press(t, m, "+") // cold delay 250ms → 300ms for all
		wantCalls(t, sp, "SetHedge delay=300ms all")
		m = press(t, m, "-")
		wantCalls(t, sp, "SetHedge delay=250ms all")
		m = press(t, m, "a")
		wantCalls(t, sp, "SetHedge delay=auto all")
		m = press(t, m, "down") // eth_getBalance
		if m.selectedMethod() != "eth_getBalance" {
			t.Fatalf("selected %q", m.selectedMethod())
		}
		m = press(t, m, "-")
		wantCalls(t, sp, "SetHedge delay=200ms method=eth_getBalance")
		if h := m.snap.Methods["eth_getBalance"].Hedge; h.Delay != 200*time.Millisecond || h.DelaySource != "live" {
			t.Fatalf("delay on screen %+v", h)
		}
		m = press(t, m, "=", "1", "2", "0", "m", "s", "enter")
		wantCalls(t, sp, "SetHedge delay=120ms method=eth_getBalance")
		m = press(t, m, "=", "x", "enter") // a bad value: said, not sent
		wantCalls(t, sp)
		if !m.status.err {
			t.Fatalf("bad delay not reported: %q", m.status.text)
		}
		m = press(t, m, "a")
		wantCalls(t, sp, "SetHedge delay=auto method=eth_getBalance")
		m = press(t, m, "down") // eth_sendRawTransaction: a write, never hedged
		m = press(t, m, "+")
		wantCalls(t, sp)
		if !strings.Contains(m.status.text, "never hedged") {
			t.Fatalf("status %q", m.status.text)
		}
		if ev := lastEvent(t, r); ev.Type != engine.EventConfig || ev.Actor != engine.ActorConsole {
			t.Fatalf("engine event %+v", ev)
		}
	})
}

func TestUpdate_NavigationFreezeFilterHelpDetailQuit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "down", "down", "up")
		if m.epCursor != 1 {
			t.Fatalf("cursor at %d", m.epCursor)
		}
		m = press(t, m, "tab", "tab", "tab", "shift+tab")
		if m.focus != focusEvents {
			t.Fatalf("focus %d", m.focus)
		}
		m = press(t, m, "enter")
		if m.overlay != overlayDetail || !strings.Contains(m.View(), "beta") || !strings.Contains(m.View(), "score") {
			t.Fatalf("enter shows no detail:\n%s", m.View())
		}
		m = press(t, m, "esc", "?")
		if m.overlay != overlayHelp || !strings.Contains(m.View(), "drain/undrain") {
			t.Fatal("? shows no help")
		}
		m = press(t, m, "esc", "p")
		if !m.frozen || !strings.Contains(m.View(), "FROZEN") {
			t.Fatal("p did not freeze the screen")
		}
		m = press(t, m, "p")
		if m.frozen {
			t.Fatal("p did not unfreeze")
		}
		r.eng.Drain(engine.ActorAdmin, "gamma")
		m = refreshed(t, m)
		m = press(t, m, "/", "g", "a", "m", "enter")
		for _, ev := range m.filteredEvents() {
			if ev.Endpoint != "gamma" {
				t.Fatalf("filter gam shows %+v", ev)
			}
		}
		if len(m.filteredEvents()) == 0 {
			t.Fatal("filter shows nothing")
		}
		m = press(t, m, "esc")
		if m.evFilter != "" {
			t.Fatal("esc did not clear the filter")
		}
		m = press(t, m, "tab", "j", "j", "k")             // back on the endpoints panel: j/k move too
		if m.focus != focusEndpoints || m.epCursor != 1 { // from beta: down to gamma (the last), then up
			t.Fatalf("j j k: focus %d, cursor %d", m.focus, m.epCursor)
		}
		for _, k := range []string{"q", "ctrl+c"} {
			_, cmd := m.Update(keyMsg(k))
			if _, ok := cmd().(tea.QuitMsg); !ok {
				t.Fatalf("%s does not quit", k)
			}
		}
		wantCalls(t, sp)
	})
}

func TestUpdate_ReadOnlyMakesNoCall(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, true)
		for _, k := range []string{"d", "f", "c", "h", "+", "-", "a", "="} {
			m = press(t, m, k)
			if m.overlay != overlayNone || !strings.Contains(m.status.text, "read-only") {
				t.Fatalf("%s in read-only: overlay %d, status %q", k, m.overlay, m.status.text)
			}
		}
		wantCalls(t, sp)
		m = press(t, m, "?")
		if !strings.Contains(m.View(), "--readonly") {
			t.Fatal("the help does not say the console is read-only")
		}
		if strings.Contains(m.helpBar(), "drain") {
			t.Fatalf("help bar offers drain in read-only: %q", m.helpBar())
		}
	})
}

func TestUpdate_OneRefreshInFlightAtATime(t *testing.T) {
	r := newRig(t, "alpha")
	m := New(Options{Backend: Local{Engine: r.eng}})
	if m.refresh() == nil {
		t.Fatal("no first refresh")
	}
	mm, cmd := m.Update(tickMsg(time.Now()))
	m = mm.(Model)
	if !m.fetching {
		t.Fatal("not fetching")
	}
	// A tick while the refresh is in flight starts none: the batch holds
	// only the next tick.
	mm, _ = m.Update(tickMsg(time.Now()))
	if m2 := mm.(Model); m2.refresh() != nil {
		t.Fatal("a second refresh started while one was in flight")
	}
	_ = cmd
}

func TestUpdate_FailedRefreshMarksStaleAndRecovers(t *testing.T) {
	r := newRig(t, "alpha")
	remote, _ := NewRemote("http://"+r.eng.AdminAddr(), "")
	defer remote.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := New(Options{Backend: remote, Now: func() time.Time { return now }})
	mm, _ := m.Update(sizeMsg(100, 30))
	m = refreshed(t, mm.(Model))
	mm, _ = m.Update(snapshotMsg{err: errUnreachable})
	m = mm.(Model)
	now = now.Add(7 * time.Second)
	v := m.View()
	if !strings.Contains(v, "STALE 7s") || !strings.Contains(v, "reconnecting") || !strings.Contains(v, "alpha") {
		t.Fatalf("a failed refresh is not marked stale (or the last data went):\n%s", v)
	}
	m = refreshed(t, m)
	if m.fetchErr != nil || strings.Contains(m.View(), "STALE") {
		t.Fatal("still stale after a good refresh")
	}
}

var errUnreachable = errorString("http://127.0.0.1:1 unreachable: connection refused")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestUpdate_KeysReadTogetherAreStillSeparateKeys(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	sp := &spy{Backend: Local{Engine: r.eng}}
	m := console(t, sp, 100, 30, false)
	mm, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jdy")})
	m = settleSequence(t, mm.(Model), cmd)
	wantCalls(t, sp, "Drain beta")
}

// settleSequence runs the commands of a tea.Sequence in order (a single
// command when the sequence compacted to one).
func settleSequence(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	if cmd == nil {
		return m
	}
	msg := cmd()
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeOf(tea.Cmd(nil)) {
		for i := range v.Len() {
			m = settle(t, m, v.Index(i).Interface().(tea.Cmd))
		}
		return m
	}
	mm, next := m.Update(msg)
	return settle(t, mm.(Model), next)
}

// A frozen screen holds the picture, not the actions: what a key warns of
// and acts on is the pool as it is now. Before, a drain confirmed on a
// frozen screen counted endpoints drained since as routable, and left out
// the warning that none would be left.
func TestUpdate_FrozenScreenActsOnThePoolNow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "p", "down", "down") // frozen, gamma selected
		for _, name := range []string{"alpha", "beta"} {
			if err := r.eng.Drain(engine.ActorAdmin, name); err != nil {
				t.Fatal(err)
			}
		}
		shown := m.View()
		m = refreshed(t, m)
		if m.View() != shown || strings.Contains(m.View(), "DRAINED") {
			t.Fatalf("the frozen screen changed:\n%s", m.View())
		}
		m = press(t, m, "d")
		q := m.confirmQuestion()
		if m.overlay != overlayConfirm || !strings.Contains(q, "Drain gamma?") || !strings.Contains(q, "No other endpoint stays routable") ||
			!strings.Contains(q, "no endpoint would be left") || !strings.Contains(q, "frozen") {
			t.Fatalf("drain on a frozen screen after the others were drained: %q", q)
		}
		m = press(t, m, "n")
		wantCalls(t, sp)
		if !m.frozen || m.View() == "" || strings.Contains(m.View(), "DRAINED") {
			t.Fatal("answering the question thawed the screen")
		}
		m = press(t, m, "p")
		m = refreshed(t, m)
		if n := strings.Count(m.View(), "DRAINED"); n != 2 {
			t.Fatalf("thawed: %d endpoints shown drained, want 2", n)
		}
	})
}

// + and - stop at the ends of their ladder and say so; - from 0s (a
// duplicate at once) used to set 5ms, and + at 2s sent 2s again.
func TestUpdate_DelayLadderStopsAtItsEnds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "tab", "down") // eth_blockNumber, or the first method
		name := m.selectedMethod()
		if name == "" {
			t.Fatal("no method row")
		}
		m = press(t, m, "=", "0", "s", "enter")
		wantCalls(t, sp, "SetHedge delay=0s method="+name)
		m = press(t, m, "-")
		wantCalls(t, sp)
		if !strings.Contains(m.status.text, "bottom") || m.snap.Methods[name].Hedge.Delay != 0 {
			t.Fatalf("- at 0s: status %q, delay %s", m.status.text, m.snap.Methods[name].Hedge.Delay)
		}
		m = press(t, m, "=", "2", "s", "enter", "+")
		wantCalls(t, sp, "SetHedge delay=2s method="+name)
		if !strings.Contains(m.status.text, "top") {
			t.Fatalf("+ at 2s: status %q", m.status.text)
		}
		m = press(t, m, "-")
		wantCalls(t, sp, "SetHedge delay=1.5s method="+name)
	})
}

// A result on the status line gives way to the hint after statusHold: left
// on, "alpha has no fault to clear" contradicted the fault injected later.
func TestUpdate_StatusResultGivesWayToTheHint(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	m := New(Options{Backend: Local{Engine: r.eng}, Location: time.UTC, Now: func() time.Time { return now }})
	mm, _ := m.Update(sizeMsg(100, 30))
	m = refreshed(t, mm.(Model))
	m = press(t, m, "c")
	if !strings.Contains(m.View(), "alpha has no fault to clear") {
		t.Fatalf("no result shown:\n%s", m.View())
	}
	now = now.Add(statusHold - time.Second)
	if !strings.Contains(m.View(), "alpha has no fault to clear") {
		t.Fatal("the result went before statusHold")
	}
	now = now.Add(2 * time.Second)
	if v := m.View(); strings.Contains(v, "no fault to clear") || !strings.Contains(v, "endpoint keys act on alpha") {
		t.Fatalf("%s after the result: still shown, or no hint:\n%s", statusHold+time.Second, v)
	}
}

// Hedging off reads off on the (all methods) row too, and turning it off
// or setting a delay keeps the header on its lines.
func TestUpdate_HedgingOffShowsOnEveryRowWithoutMovingTheHeader(t *testing.T) {
	// At 120 columns the second header line is full: a live delay's item
	// one cell wider than auto's moved the snapshot's age to a third line.
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) { hedgingOffAndLive(t, size[0], size[1]) })
	}
}

func hedgingOffAndLive(t *testing.T, width, height int) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, width, height, false)
		lines := func(m Model) int { return len(m.headerLines()) }
		before := lines(m)
		m = press(t, m, "h", "y")
		wantCalls(t, sp, "SetHedge enabled=false all")
		row := ""
		for _, l := range strings.Split(m.View(), "\n") {
			if strings.Contains(l, "(all methods)") {
				row = l
			}
		}
		if !strings.Contains(row, "off") || strings.Contains(row, "auto") || strings.Contains(row, "p95") {
			t.Fatalf("hedging off, the (all methods) row reads %q (off has no source)", row)
		}
		if lines(m) != before {
			t.Fatalf("hedging off: header on %d lines, was %d", lines(m), before)
		}
		m = press(t, m, "h", "=", "1", "0", "0", "m", "s", "enter")
		if lines(m) != before || !strings.Contains(m.View(), "hedging 100ms live") {
			t.Fatalf("a live delay: header on %d lines (was %d):\n%s", lines(m), before, m.View())
		}
	})
}

// q with a question, menu or view open is that overlay's key (a question:
// no; a menu or view: closed, as esc closes it), never quit: quitting an
// in-process console stops the proxy, and "d q" drained nothing but ended
// everything. ctrl+c still quits from anywhere.
func TestUpdate_QAtAnOverlayClosesItAndDoesNotQuit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		for _, keys := range [][]string{{"d"}, {"f"}, {"f", "right", "enter"}, {"r"}, {"h"}, {"?"}, {"enter"}, {"tab", "down", "t"}} {
			m = press(t, m, keys...)
			if m.overlay == overlayNone {
				t.Fatalf("%v opened nothing", keys)
			}
			mm, cmd := m.Update(keyMsg("q"))
			m = mm.(Model)
			if cmd != nil {
				if _, ok := cmd().(tea.QuitMsg); ok {
					t.Fatalf("%v then q quits", keys)
				}
			}
			if m.quitting || m.overlay != overlayNone {
				t.Fatalf("%v then q: quitting %v, overlay %d", keys, m.quitting, m.overlay)
			}
			if keys[0] == "tab" {
				m = press(t, m, "shift+tab")
			}
		}
		wantCalls(t, sp)
		if ep := r.eng.Snapshot().Endpoints[0]; ep.Drained || ep.Fault != nil || !r.eng.Snapshot().Hedge.Enabled {
			t.Fatalf("q at an overlay changed the engine: %+v", ep)
		}
		// In the text input q is a letter.
		m = press(t, m, "/", "q")
		if m.overlay != overlayInput || m.input.Value() != "q" {
			t.Fatalf("q in the filter input: overlay %d, value %q", m.overlay, m.input.Value())
		}
		_, cmd := m.Update(keyMsg("ctrl+c"))
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatal("ctrl+c at an overlay does not quit")
		}
		wantCalls(t, sp)
	})
}

// p freezes the picture without moving it: at 120×36 "FROZEN 2s     p
// resumes" took a third header line, and the events panel a row less. The
// snapshot's age and FROZEN take one width (p resumes is said on the
// status line), at every width and however long the freeze lasts.
func TestView_FreezingKeepsTheHeadersLines(t *testing.T) {
	for _, fx := range fixtures {
		for w := 80; w <= 200; w += 3 {
			m := fixedModel(fx.snap(), themes.Default(), w, 36)
			before := m.headerLines()
			m = pressKeys(m, "p")
			for _, age := range []time.Duration{0, 9 * time.Second, 59 * time.Second, 65 * time.Second, 3 * time.Hour, 200 * time.Hour} {
				m.frozenAt = fixedNow().Add(-age)
				got := m.headerLines()
				if len(got) != len(before) || !strings.Contains(strings.Join(got, ""), "FROZEN "+fmtAgeCoarse(age)) {
					t.Fatalf("%s at %d columns, frozen %s: header\n%s\nwas\n%s", fx.name, w, age, strings.Join(got, "\n"), strings.Join(before, "\n"))
				}
			}
			if !strings.Contains(m.View(), "p resumes") {
				t.Fatalf("%s at %d columns: nothing says p resumes:\n%s", fx.name, w, m.View())
			}
			m.status = statusLine{}
			if !strings.Contains(m.statusLineView(), "frozen, p resumes") {
				t.Fatalf("the hint does not say the screen is frozen: %q", m.statusLineView())
			}
		}
	}
}

// → goes up on every menu field: on the rate it went 100% → 50% → 25%
// while on latency and duration it went up. And the fields stop at their
// ends, saying so on the status line (→ past 10m gave 5s).
func TestUpdate_MenuValuesGoUpWithRightAndStopAtTheEnds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := press(t, console(t, sp, 100, 30, false), "f", "down") // the rate field, at 100%
		rate := func() float64 { return faultRates[m.fault.rate] }
		m = press(t, m, "right")
		if rate() != 1 || !strings.Contains(m.status.text, "rate stops at 100%, its highest (5%–100%)") {
			t.Fatalf("→ at 100%%: rate %g, status %q", rate(), m.status.text)
		}
		m = press(t, m, "left", "left")
		if rate() != 0.25 {
			t.Fatalf("← ←: rate %g, want 0.25", rate())
		}
		// Moved off the end, the status line no longer says it stops there.
		if strings.Contains(m.status.text, "stops at") {
			t.Fatalf("← ← off 100%%: status still %q", m.status.text)
		}
		m = press(t, m, "right")
		if rate() != 0.5 {
			t.Fatalf("→: rate %g, want 0.5 (up)", rate())
		}
		m = press(t, m, "left", "left", "left", "left", "left")
		if rate() != 0.05 || !strings.Contains(m.status.text, "lowest") {
			t.Fatalf("← past 5%%: rate %g, status %q", rate(), m.status.text)
		}
		m = press(t, m, "down", "right", "right", "right", "right") // latency: 500ms up to 2s, and past it
		if faultLatencies[m.fault.latency] != 2*time.Second || !strings.Contains(m.status.text, "latency stops at 2.0s") {
			t.Fatalf("latency %s, status %q", faultLatencies[m.fault.latency], m.status.text)
		}
		m = press(t, m, "down")
		for range len(faultDurations) {
			m = press(t, m, "right")
		}
		if faultDurations[m.fault.duration] != 10*time.Minute || !strings.Contains(m.status.text, "duration stops at 10m, its highest (5s–10m)") {
			t.Fatalf("→ past 10m: duration %s, status %q", faultDurations[m.fault.duration], m.status.text)
		}
		m = press(t, m, "enter", "y")
		wantCalls(t, sp, "InjectFault alpha latency rate=0.05 latency=2s duration=10m0s")

		// The role menu's share stops at its ends too.
		m = press(t, m, "r", "right", "right", "right", "down") // canary, its share field at 5%
		for range len(roleShares) {
			m = press(t, m, "right")
		}
		if m.role.shareValue() != 1 || !strings.Contains(m.status.text, "share stops at 100%") {
			t.Fatalf("share past 100%%: %g, status %q", m.role.shareValue(), m.status.text)
		}
		m = press(t, m, "esc")
		wantCalls(t, sp)
	})
}

// Attached to an instance that stopped answering (STALE), d asked "its 0
// in flight finish. 1 other endpoint(s) stay routable" from the last
// answer with no word that it was old; a frozen screen's question says
// what its figures are. Now a stale one says so too, frozen or not.
func TestUpdate_DrainQuestionSaysItsFiguresAreStale(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	remote, _ := NewRemote("http://"+r.eng.AdminAddr(), "")
	defer remote.Close()
	now := time.Now()
	m := New(Options{Backend: remote, Location: time.UTC, Now: func() time.Time { return now }})
	mm, _ := m.Update(sizeMsg(100, 30))
	m = refreshed(t, mm.(Model))
	took := now // the answer's age runs from its arrival, on the engine's clock too
	m = press(t, m, "d")
	if q := m.confirmQuestion(); strings.Contains(q, "STALE") || strings.Contains(q, "frozen") {
		t.Fatalf("a fresh question says it is stale: %q", q)
	}
	m = press(t, m, "n")
	for _, frozen := range []bool{false, true} {
		m.frozen = frozen
		mm, _ = m.Update(snapshotMsg{err: errUnreachable})
		m = mm.(Model)
		now = now.Add(8 * time.Second)
		m = press(t, m, "d")
		want := fmt.Sprintf("(STALE: the engine has not answered for %s; these figures are its last answer, %s old, and the drain may fail.)",
			fmtAge(now.Sub(m.staleFrom)), fmtAge(now.Sub(took)))
		if q := m.confirmQuestion(); m.overlay != overlayConfirm || !strings.Contains(q, "Drain alpha?") || !strings.Contains(q, want) {
			t.Fatalf("frozen %v: the question does not say its figures are stale: %q", frozen, q)
		}
		m = press(t, m, "n")
	}
	if r.eng.Snapshot().Endpoints[0].Drained {
		t.Fatal("drained")
	}
	// Back in touch: no note.
	m.frozen = false
	m = refreshed(t, m)
	if m = press(t, m, "d"); strings.Contains(m.confirmQuestion(), "STALE") {
		t.Fatalf("after a good refresh: %q", m.confirmQuestion())
	}
}

// One and many in words: "its 1 in flight finish", "1 other endpoint(s)
// stay routable", "1 consecutive failures" read wrong.
func TestView_OneAndManyInWords(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[0].InFlight = 1
	s.Endpoints[1].Routable, s.Routable = false, 2
	s.Endpoints[0].Breaker.ConsecutiveFailures = 1
	m := fixedModel(s, themes.Default(), 100, 30)
	q := pressKeys(m, "d").confirm.question
	if !strings.Contains(q, "its 1 request in flight finishes. 1 other endpoint stays routable.") || strings.Contains(q, "(s)") {
		t.Errorf("drain question: %q", q)
	}
	s.Endpoints[0].InFlight, s.Endpoints[1].Routable, s.Routable = 3, true, 3
	m = fixedModel(s, themes.Default(), 100, 30)
	if q := pressKeys(m, "d").confirm.question; !strings.Contains(q, "its 3 requests in flight finish. 2 other endpoints stay routable.") {
		t.Errorf("drain question: %q", q)
	}
	if d := strings.Join(m.detailLines(200), " "); !strings.Contains(d, "1 consecutive failure") || strings.Contains(d, "1 consecutive failures") {
		t.Errorf("detail: %q", d)
	}
	// A noun ending in s: "0 trial successs so far" was on a half-open
	// endpoint's detail.
	for n, want := range map[int]string{0: "0 trial successes", 1: "1 trial success", 2: "2 trial successes"} {
		if got := engine.Count(n, "trial success"); got != want {
			t.Errorf("engine.Count(%d): %q, want %q", n, got, want)
		}
	}
}

// Every hedging state's header item is one width, as the README says, and
// the snapshot's age is FROZEN's: an item a cell wider in one state moved
// everything below the header when it wrapped (at 120 columns, a live
// delay put "snapshot 0s" on a third line).
func TestHeader_HedgingStatesAndAgeAreOneWidth(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 120, 36, false)
		for _, h := range []engine.HedgeStatus{
			{Enabled: true, Delay: engine.AutoDelay, Quantile: 0.95},
			{Enabled: false},
			{Enabled: true, Paused: true},
			{Enabled: true, Delay: 125 * time.Millisecond, DelaySource: "live"},
			{Enabled: true, Delay: 12500 * time.Microsecond, DelaySource: "live"},
			{Enabled: true, Delay: 125 * time.Millisecond, DelaySource: "config"},
		} {
			m.snap.Hedge = h
			if got := lipgloss.Width(m.hedgeItem()); got != hedgeItemWidth {
				t.Errorf("%+v: %q is %d cells, want %d", h, m.hedgeItem(), got, hedgeItemWidth)
			}
		}
		age := m.headerLines()
		m.frozen, m.frozenAt = true, m.opts.Now().Add(-12*time.Second)
		if frozen := m.headerLines(); len(frozen) != len(age) || lipgloss.Width(frozen[len(frozen)-1]) != lipgloss.Width(age[len(age)-1]) {
			t.Errorf("frozen header %q, live %q: not one width", frozen[len(frozen)-1], age[len(age)-1])
		}
	})
}

// + pressed twice before the engine answered the first (or a Snapshot
// showed it) took one step twice: the second stepped from the Snapshot's
// delay, and eth_call was set to 75ms twice. It steps from the delay just
// set until a Snapshot shows it.
func TestUpdate_TwoQuickDelayStepsTakeTwoSteps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "tab", "down")
		name := m.selectedMethod()
		if name == "" {
			t.Fatal("no method row")
		}
		m = press(t, m, "=", "6", "0", "m", "s", "enter")
		wantCalls(t, sp, "SetHedge delay=60ms method="+name)
		mm, first := m.Update(keyMsg("+"))
		mm, second := mm.(Model).Update(keyMsg("+"))
		m = settle(t, mm.(Model), first)
		m = settle(t, m, second)
		wantCalls(t, sp, "SetHedge delay=75ms method="+name, "SetHedge delay=100ms method="+name)
		if got := m.snap.Methods[name].Hedge.Delay; got != 100*time.Millisecond {
			t.Fatalf("the Snapshot shows %s after both steps, want 100ms", got)
		}
		m = press(t, m, "+") // the Snapshot shows the step: + goes on from it
		wantCalls(t, sp, "SetHedge delay=125ms method="+name)
	})
}
