package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/engine"
)

// onKey sends a key to the open overlay, or else handles it for the
// focused panel and the whole console.
func (m Model) onKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && m.overlay != overlayInput {
		// Keys typed faster than one read ("dy") arrive as one message:
		// they are still separate keys, in order.
		var cmds []tea.Cmd
		var cur tea.Model = m
		for _, r := range msg.Runes {
			var cmd tea.Cmd
			cur, cmd = cur.(Model).onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			cmds = append(cmds, cmd)
		}
		return cur, tea.Sequence(cmds...)
	}
	// ctrl+c quits from anywhere; q only with nothing open: a question,
	// menu or view takes it (no, or closed as esc closes it), since
	// quitting an in-process console stops the proxy.
	tooSmall := m.width < minWidth || m.height < minHeight
	if key.Matches(msg, m.keys.Quit) && (m.overlay == overlayNone || msg.String() == "ctrl+c" || tooSmall) {
		m.quitting = true
		if m.drill.cancel != nil {
			m.drill.cancel() // the drill stops and clears its fault
		}
		return m, tea.Quit
	}
	if tooSmall {
		// Nothing is drawn but the size it needs: d then y drained an
		// endpoint behind a question never seen.
		return m, nil
	}
	if m.overlay != overlayNone {
		return m.onOverlayKey(msg)
	}
	if m.opts.ReadOnly && m.isMutatingKey(msg) {
		m.status = statusLine{text: "read-only console (--readonly): " + msg.String() + " would change the engine", err: true}
		return m, nil
	}
	if !m.haveSnap && m.isMutatingKey(msg) {
		// With no Snapshot yet, h, + and - toggled and stepped from zero
		// values (+ set every method's delay to 5ms) and D asked with
		// breaker.cooldown 0s: nothing acts before the pool is on screen.
		m.status = statusLine{text: msg.String() + " waits for the first snapshot: the console has not seen the pool yet", err: true}
		return m, nil
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Help):
		m.overlay = overlayHelp
	case key.Matches(msg, k.Tab):
		m.focus = (m.focus + 1) % numFocus
	case key.Matches(msg, k.ShiftTab):
		m.focus = (m.focus + numFocus - 1) % numFocus
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.Top):
		m.toTop()
	case key.Matches(msg, k.Enter):
		if m.layout().inlineDetail && !m.detailCut() {
			m.status = statusLine{text: "the detail of the selected endpoint is on the right"}
		} else if _, ok := m.selected(); ok {
			m.overlay, m.detailTop = overlayDetail, 0
		}
	case key.Matches(msg, k.Freeze):
		m.frozen = !m.frozen
		m.haveLive = false
		if m.frozen {
			m.frozenAt = m.opts.Now()
			m.status = statusLine{text: "screen frozen, p resumes: the console fetches behind it, and keys act on the pool as it is now"}
			return m, nil
		}
		m.status = statusLine{text: "screen live again"}
		cmd := m.refresh() // before m is returned: it marks the refresh on m
		return m, cmd
	case key.Matches(msg, k.Filter):
		m.openInput(inputFilter)
	case key.Matches(msg, k.Esc):
		if m.evFilter != "" {
			m.evFilter = ""
			m.status = statusLine{text: "events: filter cleared"}
		}
	case key.Matches(msg, k.Drain):
		return m.onLive(Model.drainKey)
	case key.Matches(msg, k.Fault):
		return m.onLive(func(m Model) (tea.Model, tea.Cmd) {
			if ep, ok := m.selected(); ok {
				m.fault = newFaultMenu(ep.Name)
				m.overlay = overlayFault
			}
			return m, nil
		})
	case key.Matches(msg, k.Clear):
		return m.onLive(Model.clearKey)
	case key.Matches(msg, k.Role):
		return m.onLive(func(m Model) (tea.Model, tea.Cmd) {
			if ep, ok := m.selected(); ok {
				m.role = newRoleMenu(ep)
				m.overlay = overlayRole
			}
			return m, nil
		})
	case key.Matches(msg, k.Hedging):
		return m.onLive(Model.hedgingKey)
	case key.Matches(msg, k.DelayUp):
		return m.onLive(func(m Model) (tea.Model, tea.Cmd) { return m.delayStep(+1) })
	case key.Matches(msg, k.DelayDown):
		return m.onLive(func(m Model) (tea.Model, tea.Cmd) { return m.delayStep(-1) })
	case key.Matches(msg, k.Auto):
		return m.setDelay("auto")
	case key.Matches(msg, k.Exact):
		m.openInput(inputDelay)
	case key.Matches(msg, k.Tune):
		return m.openTuning()
	case key.Matches(msg, k.Drill):
		return m.drillKey()
	}
	return m, nil
}

func (m Model) isMutatingKey(msg tea.KeyMsg) bool {
	all := newKeyMap(false)
	for _, b := range all.mutating() {
		if key.Matches(msg, *b) {
			return true
		}
	}
	return false
}

// onLive runs an action key on the pool as it is now: while the screen is
// frozen, on the newest Snapshot fetched behind it, with the cursors moved
// to the same endpoint and method there. A drain confirmed on a frozen
// screen counted routable endpoints that had since been drained, and left
// out the "no endpoint would be left" warning. The screen stays frozen.
func (m Model) onLive(act func(Model) (tea.Model, tea.Cmd)) (tea.Model, tea.Cmd) {
	if !m.frozen || !m.haveLive {
		return act(m)
	}
	if !m.live.Started.Equal(m.snap.Started) {
		// The screen shows a process that is gone: its endpoint or method
		// under the cursor may not be in the new one, where the same row
		// is another (d drained the endpoint at the cursor's row there).
		m.status = statusLine{text: "the attached instance restarted behind the frozen screen (up since " +
			m.live.Started.In(m.opts.Location).Format("15:04:05") + "): p shows it, then keys act on it", err: true}
		return m, nil
	}
	shown, epCursor, mCursor := m.snap, m.epCursor, m.mCursor
	ep, _ := m.selected()
	method := m.selectedMethod()
	m.snap = m.live
	if i := slices.IndexFunc(m.snap.Endpoints, func(e engine.EndpointSnapshot) bool { return e.Name == ep.Name }); i >= 0 {
		m.epCursor = i
	}
	m.mCursor = 0
	if method != "" {
		m.mCursor = slices.Index(m.methodNames(), method) + 1 // 0, all methods, if it is gone
	}
	next, cmd := act(m)
	nm := next.(Model)
	nm.snap, nm.epCursor, nm.mCursor = shown, epCursor, mCursor
	return nm, cmd
}

// toTop puts the focused panel's cursor on its first row (the events:
// the newest).
func (m *Model) toTop() {
	switch m.focus {
	case focusEndpoints:
		m.epCursor = 0
	case focusMethods:
		m.mCursor, m.lostMethod = 0, ""
	case focusEvents:
		m.evOffset = 0
	}
}

// move moves the focused panel's cursor.
func (m *Model) move(d int) {
	switch m.focus {
	case focusEndpoints:
		m.epCursor = clamp(m.epCursor+d, 0, len(m.snap.Endpoints)-1)
	case focusMethods:
		m.mCursor, m.lostMethod = clamp(m.mCursor+d, 0, len(m.methodNames())), ""
	case focusEvents:
		m.evOffset = clamp(m.evOffset+d, 0, max(0, len(m.filteredEvents())-1))
	}
}

// do runs an action now (after its confirmation, if it needed one).
func (m Model) do(a action) (tea.Model, tea.Cmd) {
	if m.frozen && m.haveLive && !m.live.Started.Equal(m.snap.Started) {
		// Whatever path led here (a, =, the tuning view's keys): the
		// screen shows a process that is gone.
		m.status = statusLine{text: "not sent (" + a.desc + "): the attached instance restarted behind the frozen screen (up since " +
			m.live.Started.In(m.opts.Location).Format("15:04:05") + "): p shows it, then keys act on it", err: true}
		return m, nil
	}
	m.status = statusLine{text: "… " + a.desc}
	a.on, a.loc = m.snap.Started, m.opts.Location // frozen: the same process as live (checked above)
	return m, actionCmd(m.opts.Backend, a)
}

// ask opens a confirmation that says what will happen; it defaults to No.
func (m Model) ask(question string, a action) (tea.Model, tea.Cmd) {
	m.confirm = confirmDialog{question: question, act: a}
	m.overlay = overlayConfirm
	return m, nil
}

func (m Model) drainKey() (tea.Model, tea.Cmd) {
	ep, ok := m.selected()
	if !ok {
		return m, nil
	}
	if ep.Drained {
		return m.do(action{kind: actUndrain, endpoint: ep.Name, desc: "undrain " + ep.Name})
	}
	left := 0
	var resort []string // what panic routing would still send to
	for _, o := range m.snap.Endpoints {
		switch {
		case o.Name == ep.Name:
		case o.Routable:
			left++
		case o.LastResort():
			resort = append(resort, o.Name+": "+notRoutableReason(o, m.snap))
		}
	}
	finish, stay := engine.Plural(ep.InFlight, "finishes", "finish"), "stay"
	others := engine.Count(left, "other endpoint")
	switch left {
	case 0:
		others, stay = "No other endpoint", "stays"
	case 1:
		stay = "stays"
	}
	q := fmt.Sprintf("Drain %s? It gets no new requests until undrained (d again); its %s in flight %s. %s %s routable.",
		ep.Name, engine.Count(ep.InFlight, "request"), finish, others, stay)
	switch {
	case left == 0 && len(resort) == 0:
		q += " WARNING: no endpoint would be left to route to: every request fails."
	case left == 0:
		q += fmt.Sprintf(" WARNING: panic routing would send every request to the %s left, least bad first (%s).",
			engine.Count(len(resort), "endpoint"), strings.Join(resort, "; "))
	}
	// What its figures are (stale, frozen) is said as the question is
	// drawn (figuresNote): worked out here, "not answered for 3s" stayed
	// while the header's STALE went on to 16s.
	m.confirm = confirmDialog{question: q, act: action{kind: actDrain, endpoint: ep.Name, desc: "drain " + ep.Name}, figuresNote: true}
	m.overlay = overlayConfirm
	return m, nil
}

// redoDrainQuestion asks an open drain question again on the pool as it
// is now: asked once from the figures of its Snapshot, it still said "2
// other endpoints stay routable" after both had gone out of routing.
func (m *Model) redoDrainQuestion() {
	c := m.confirm
	if m.overlay != overlayConfirm || c.act.kind != actDrain || c.then != nil {
		return
	}
	i := slices.IndexFunc(m.snap.Endpoints, func(e engine.EndpointSnapshot) bool { return e.Name == c.act.endpoint })
	if i < 0 {
		// An attached instance restarted without it: the figures asked
		// about a pool it is no longer in.
		m.confirm.question = fmt.Sprintf("Drain %s? %s is no longer in the pool (the engine's newest snapshot has no endpoint of that name): there is nothing to drain, and y would fail.",
			c.act.endpoint, c.act.endpoint)
		return
	}
	asked := *m
	asked.epCursor = i
	next, _ := asked.onLive(Model.drainKey) // drained since: an undrain, never run
	if n := next.(Model); n.overlay == overlayConfirm && n.confirm.act.kind == actDrain {
		m.confirm.question = n.confirm.question
	}
}

func (m Model) clearKey() (tea.Model, tea.Cmd) {
	ep, ok := m.selected()
	if !ok {
		return m, nil
	}
	if ep.Fault == nil {
		m.status = statusLine{text: ep.Name + " has no fault to clear"}
		return m, nil
	}
	return m.do(action{kind: actClearFault, endpoint: ep.Name, desc: "clear the " + string(ep.Fault.Mode) + " fault on " + ep.Name})
}

func (m Model) hedgingKey() (tea.Model, tea.Cmd) {
	on := !m.snap.Hedge.Enabled
	u := engine.HedgeUpdate{Enabled: &on, AllMethods: true}
	if on {
		return m.do(action{kind: actHedge, hedge: u, desc: "hedging on for all methods"})
	}
	return m.ask("Turn hedging off for all methods? Slow reads will no longer get a second attempt, so the tail (p99) grows back to the slowest endpoint's.",
		action{kind: actHedge, hedge: u, desc: "hedging off for all methods"})
}

// delaySteps is the ladder + and - climb.
var delaySteps = []time.Duration{5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200, 250, 300, 400, 500, 750, 1000, 1500, 2000}

// currentDelay is the delay + and - start from for the selected row.
func (m Model) currentDelay() time.Duration {
	if name := m.selectedMethod(); name != "" {
		if h := m.snap.Methods[name].Hedge; h != nil {
			return h.Delay
		}
		return 0
	}
	if m.snap.Hedge.Delay != engine.AutoDelay {
		return m.snap.Hedge.Delay
	}
	// Global auto: start from the delays the methods use now (their median).
	var ds []time.Duration
	for _, ms := range m.snap.Methods {
		if ms.Hedge != nil {
			ds = append(ds, ms.Hedge.Delay)
		}
	}
	if len(ds) == 0 {
		return 250 * time.Millisecond
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func (m Model) delayStep(dir int) (tea.Model, tea.Cmd) {
	if name := m.selectedMethod(); name != "" && m.snap.Methods[name].Hedge == nil {
		m.status = statusLine{text: name + " is never hedged (" + m.snap.Methods[name].Class.String() + ")", err: true}
		return m, nil
	}
	target := m.selectedMethod()
	cur := m.stepFrom(target)
	next, ok := time.Duration(0), false
	for _, s := range delaySteps {
		d := s * time.Millisecond
		if dir > 0 && d > cur && !ok {
			next, ok = d, true
		}
		if dir < 0 && d < cur {
			next, ok = d, true
		}
	}
	if !ok {
		// Past an end of the ladder: say so rather than set what is set
		// (or, from 0s, climb while asked to go down).
		end, verb := "top", "+"
		if dir < 0 {
			end, verb = "bottom", "-"
		}
		m.status = statusLine{text: fmt.Sprintf("hedge delay of %s is %s, at or past the %s of the %s ladder (%s–%s); = sets any delay",
			m.delayTarget(), fmtDelay(cur), end, verb, fmtDelay(delaySteps[0]*time.Millisecond), fmtDelay(delaySteps[len(delaySteps)-1]*time.Millisecond))}
		return m, nil
	}
	mm, cmd := m.setDelay(next.String())
	if stepped, ok := mm.(Model); ok && cmd != nil {
		stepped.stepped = steppedDelay{target: target, delay: next}
		return stepped, cmd
	}
	return mm, cmd
}

// delayTarget names what the delay keys act on.
func (m Model) delayTarget() string {
	if name := m.selectedMethod(); name != "" {
		return name
	}
	return "all methods"
}

// setDelay sets the delay ("auto" or a duration) of the selected method
// row, or of all methods for the first row.
func (m Model) setDelay(delay string) (tea.Model, tea.Cmd) {
	return m.setDelayOf(m.selectedMethod(), delay)
}

// setDelayOf sets the delay of method name ("": all methods).
func (m Model) setDelayOf(name, delay string) (tea.Model, tea.Cmd) {
	d, err := engine.ParseDelay(delay)
	if err != nil {
		m.status = statusLine{text: "delay: " + err.Error(), err: true}
		return m, nil
	}
	u := engine.HedgeUpdate{Delay: &delay}
	// Said as the console prints delays everywhere ("2.0s", "0ms"): the
	// key's own spelling read "→ 2s" beside "is 2.0s" on the ladder.
	desc := "hedge delay of all methods → " + fmtDelay(d)
	if name == "" {
		u.AllMethods = true
	} else {
		if _, ok := m.snap.Methods[name]; !ok {
			m.status = statusLine{text: name + " is no longer in the methods panel: its delay was not set", err: true}
			return m, nil
		}
		if m.snap.Methods[name].Hedge == nil {
			m.status = statusLine{text: name + " is never hedged (" + m.snap.Methods[name].Class.String() + ")", err: true}
			return m, nil
		}
		u.Method = name
		desc = "hedge delay of " + name + " → " + fmtDelay(d)
	}
	// A delay is set with hedging off too, for when it is back on; the
	// row still reads "off", so the line says why nothing moved.
	switch {
	case !m.snap.Hedge.Enabled:
		desc += "; hedging stays off (h turns it on)"
	case name != "" && !m.snap.Methods[name].Hedge.Enabled:
		desc += "; its hedging stays off (t, then enter on a delay row, turns it on)"
	}
	return m.do(action{kind: actHedge, hedge: u, desc: desc})
}
