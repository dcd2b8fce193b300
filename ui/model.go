package ui

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Options configure a console.
type Options struct {
	Backend  Backend
	Theme    themes.Theme  // zero: the default theme
	Refresh  time.Duration // how often to ask for a Snapshot; 0 = 250ms
	ReadOnly bool          // --readonly: no key changes the engine
	Source   Source
	// Now and Location make the view a function of the model for tests;
	// nil means time.Now and time.Local.
	Now      func() time.Time
	Location *time.Location
	// Drill is the failover drill D runs; nil: none.
	Drill *Drill
}

// Source is what the header says the console is looking at.
type Source struct {
	RPC, Admin string // in-process: the engine's addresses
	Attached   string // attached: the admin URL
}

// focus is the panel keys go to.
type focus int

const (
	focusEndpoints focus = iota
	focusMethods
	focusEvents
	numFocus
)

// overlay is what covers the panels, if anything; Esc closes any.
type overlay int

const (
	overlayNone overlay = iota
	overlayHelp
	overlayConfirm
	overlayFault
	overlayRole
	overlayInput
	overlayDetail
	overlayTuning // the hedge tuning view of a method (t)
	overlayDrill  // the failover drill (D)
)

// maxEvents bounds the events the console keeps.
const maxEvents = 500

// Model is the console. Its panels are plain values; focus says which one
// gets the keys, while ticks and snapshots go to all.
type Model struct {
	opts   Options
	keys   keyMap
	styles styles
	help   help.Model

	width, height int

	// stepped: the delay + or - just set, until a Snapshot shows it.
	stepped steppedDelay

	snap      engine.Snapshot
	haveSnap  bool
	fetching  bool      // a refresh is in flight: never start a second
	fetchErr  error     // the last refresh failed (stale data is marked)
	staleFrom time.Time // when the first refresh that failed was sent
	// fetchSent is when the refresh in flight was sent: a hung instance
	// fails it only at fetchTimeout, and STALE counted from then read 3s
	// when it had not answered for 6.
	fetchSent time.Time
	lastSeq   uint64 // newest event seen
	// evWhy is why events may have left the instance's log unread since
	// the last ones came ("while the console could not reach it"), for
	// the line that counts a gap in their seq.
	evWhy string
	// clockAhead is how far this clock is ahead of the engine's, as the
	// last Snapshot's time said on arrival (engineNow).
	clockAhead time.Duration
	events     []engine.Event
	sparks     map[string]*spark
	sparkTop   float64 // the top of the sparklines' scale, in ms (drawShared)

	frozen   bool
	frozenAt time.Time
	// live is the newest Snapshot while the screen is frozen: what an
	// action decides and warns by (onLive), never what is drawn.
	live     engine.Snapshot
	haveLive bool

	// slowdown is the latest pool or rpcdash slowdown seen, kept for
	// slowdownHold after its end (slowdownEnd) so that its banner line does
	// not come and go with each short one.
	slowdown    *engine.SlowdownInfo
	slowdownEnd time.Time
	// lastPanic is the latest panic routing, held as the slowdown is.
	lastPanic *panicHeld
	// failing is the latest time every endpoint was failing, held as the
	// slowdown is.
	failing *failingHeld

	focus    focus
	epCursor int
	mCursor  int // 0 is "all methods"
	// lostMethod is the method the cursor was on when a Snapshot came
	// without it (an attached instance that restarted has not seen it
	// yet): the cursor goes back to it when it comes, unless moved since.
	lostMethod string
	evOffset   int
	evFilter   string
	overlay    overlay
	confirm    confirmDialog
	fault      faultMenu
	role       roleMenu
	input      textinput.Model
	inputKind  inputKind
	// inputMethod is the method row the delay input was opened on ("":
	// all methods).
	inputMethod string
	detailTop   int // the detail box's first line shown (it scrolls)
	tuning      tuningView
	drill       drillState
	status      statusLine
	quitting    bool
}

// statusLine is the result of the last action (or a hint). A result
// gives way to the hint after statusHold (an error after statusErrHold):
// left on, "steady has no fault to clear" contradicted the FAULT badge
// that came later. Something still under way ("… drain steady") stays
// until its result replaces it.
type statusLine struct {
	text string
	err  bool
	at   time.Time // when it was first shown; stamped by Update
	// viewHint: about the keys of the view open when it was said; it
	// goes when that view closes (it read as the panels' after esc).
	viewHint bool
}

const (
	statusHold    = 10 * time.Second
	statusErrHold = 30 * time.Second
)

// shown says whether the status line still shows s at now.
func (s statusLine) shown(now time.Time) bool {
	switch {
	case s.text == "":
		return false
	case strings.HasPrefix(s.text, "… ") || s.at.IsZero():
		return true
	case s.err:
		return now.Sub(s.at) < statusErrHold
	}
	return now.Sub(s.at) < statusHold
}

// New builds a console over opts.Backend.
func New(opts Options) Model {
	if opts.Refresh <= 0 {
		opts.Refresh = 250 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Theme.Colors == nil {
		opts.Theme = themes.Default()
	}
	m := Model{opts: opts, keys: newKeyMap(opts.ReadOnly), styles: newStyles(opts.Theme), help: help.New(),
		sparks: map[string]*spark{}, input: textinput.New()}
	m.help.ShowAll = false
	// Theme colours only: the bubbles' adaptive defaults would make Lip
	// Gloss ask the terminal for its background (and eat early keys).
	st := m.styles
	m.help.Styles = help.Styles{Ellipsis: st.faint, ShortKey: st.accent, ShortDesc: st.faint, ShortSeparator: st.faint,
		FullKey: st.accent, FullDesc: st.text, FullSeparator: st.faint}
	m.input.PromptStyle, m.input.TextStyle, m.input.PlaceholderStyle = st.accent, st.text, st.faint
	m.input.Cursor.Style = st.accent
	if opts.ReadOnly {
		m.status = statusLine{text: "read-only console: drain, fault, role and hedge keys are off (--readonly)"}
	}
	return m
}

// Init starts the ticks with one at once, whose refresh is the first.
// It starts no refresh itself: Init's receiver is a copy that Bubble Tea
// throws away, so the refresh it marked in flight was not marked, and the
// first tick started a second beside it.
func (m Model) Init() tea.Cmd {
	now := m.opts.Now()
	return func() tea.Msg { return tickMsg(now) }
}

// refresh marks a refresh in flight and returns its command, unless one is
// already in flight. Frozen, it still runs: its Snapshot is kept aside for
// the actions (onLive), and its events wait for the thaw.
func (m *Model) refresh() tea.Cmd {
	if m.fetching || m.opts.Backend == nil {
		return nil
	}
	m.fetching, m.fetchSent = true, m.opts.Now()
	return fetchCmd(m.opts.Backend, m.lastSeq)
}

// Update changes the model for one message; anything that waits or
// changes the engine is returned as a command.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	next, cmd := m.update(msg)
	if nm, ok := next.(Model); ok && nm.status.text != "" && nm.status.at.IsZero() {
		nm.status.at = nm.opts.Now()
		next = nm
	}
	return next, cmd
}

func (m Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.resizeSparks()
		return m, nil
	case tickMsg:
		// The commands first: they mark what is in flight on m.
		cmd := tea.Batch(m.refresh(), m.fetchTuning(false), tickCmd(m.opts.Refresh))
		return m, cmd
	case snapshotMsg:
		m.onSnapshot(msg)
		return m, nil
	case tuningMsg:
		m.onTuning(msg)
		return m, nil
	case drillStepMsg:
		cmd := m.onDrillStep(msg) // before m is returned: it changes m
		return m, cmd
	case drillDoneMsg:
		m.onDrillDone(msg)
		cmd := m.refresh()
		return m, cmd
	case actionDoneMsg:
		return m.onActionDone(msg)
	case tea.KeyMsg:
		return m.onKey(msg)
	}
	return m, nil
}

// onSnapshot takes a refresh's answer: on failure the last Snapshot stays
// on screen, marked stale, and the next tick tries again.
func (m *Model) onSnapshot(msg snapshotMsg) {
	m.fetching = false
	if msg.err != nil {
		// Frozen too: an action's question says its figures are stale.
		if m.fetchErr == nil {
			m.staleFrom = m.fetchSent
			if m.staleFrom.IsZero() { // a refresh a test runs by hand
				m.staleFrom = m.opts.Now()
			}
		}
		m.fetchErr = msg.err
		m.evWhy = "while the console could not reach it"
		return
	}
	m.fetchErr = nil
	m.clockAhead = m.opts.Now().Sub(msg.snap.Time)
	defer m.redoDrainQuestion()
	restarted := m.haveSnap && !msg.snap.Started.Equal(m.snap.Started)
	closed := ""
	if restarted {
		// A question or menu opened on the old process is not answered on
		// the new one, frozen or not.
		closed = m.closeAsked()
	}
	if m.frozen {
		// The screen stays as it was; the events are asked for again
		// (lastSeq is unchanged) once it thaws.
		m.live, m.haveLive = msg.snap, true
		if m.evWhy == "" {
			m.evWhy = "while the screen was frozen"
		}
		if closed != "" {
			m.status = statusLine{text: "⚠ " + closed + " closed, nothing sent: the attached instance restarted behind the frozen screen (up since " +
				msg.snap.Started.In(m.opts.Location).Format("15:04:05") + "): p shows it, then keys act on it", err: true}
		}
		return
	}
	if restarted {
		// Another instance (a restart): its events number from 1 again.
		// Those that came with this Snapshot were asked for after the old
		// instance's last: the next refresh asks for them all.
		// The console's own lines since the new process started are about
		// it (an answer not sent to it) and stay, after the note.
		var since []engine.Event
		for _, ev := range m.events {
			if ev.Type == "console" && ev.Seq == 0 && ev.Time.After(msg.snap.Started) {
				since = append(since, ev)
			}
		}
		m.events, m.lastSeq, m.evWhy = nil, 0, ""
		msg.events = nil
		m.sparks = map[string]*spark{}
		m.lastPanic, m.failing = nil, nil
		note := m.restartNote(m.snap, msg.snap)
		// At the restart's time, among the new instance's first events.
		m.events = append(m.events, engine.Event{Time: msg.snap.Started, Type: "console", Actor: engine.ActorConsole, Message: note})
		m.status = statusLine{text: "⚠ " + note, err: true}
		if closed != "" {
			m.events = append(m.events, engine.Event{Time: msg.snap.Started, Type: "console", Actor: engine.ActorConsole,
				Message: closed + " was closed unanswered, nothing sent: it was opened on the instance before the restart"})
			m.status.text = "⚠ " + m.restartNote(m.snap, msg.snap, closed+" closed, nothing sent")
		}
		m.events = append(m.events, since...)
	}
	ep, _ := m.selected()
	method := m.selectedMethod()
	if m.lostMethod != "" {
		method = m.lostMethod
	}
	m.snap, m.haveSnap = msg.snap, true
	m.settleStep()
	m.followCursors(ep.Name, method)
	m.noteSlowdown()
	m.notePanic()
	m.noteFailing()
	m.addEvents(msg.events)
	// The sparkline's width depends on the endpoints' names as well as the
	// terminal's size.
	sw := m.sparkWidth()
	for _, ep := range m.snap.Endpoints {
		sp := m.sparks[ep.Name]
		if sp == nil {
			sp = newSpark(sw, m.styles)
			m.sparks[ep.Name] = sp
		}
		sp.resize(sw)
		sp.push(ep.Series)
	}
	m.sparkTop = drawShared(m.sparks, m.styles)
	m.epCursor = clamp(m.epCursor, 0, len(m.snap.Endpoints)-1)
	m.mCursor = clamp(m.mCursor, 0, len(m.methodNames()))
}

func (m *Model) addEvents(evs []engine.Event) {
	read, fresh := m.lastSeq, len(m.events) // this refresh's events start at fresh
	var left uint64
	if len(evs) > 0 && evs[0].Seq > read+1 {
		// Each event's seq is one more than the one before: the ones
		// between left the instance's log before they were read.
		left = evs[0].Seq - read - 1
	}
	for _, ev := range evs {
		if ev.Seq > m.lastSeq {
			m.lastSeq = ev.Seq
		}
		m.appendEvent(ev)
	}
	// More than the console keeps: the oldest go, with room for the line
	// that counts those of this refresh among them.
	n := len(m.events) - maxEvents
	if left > 0 {
		n++
	}
	if left == 0 && n > fresh {
		n++ // the line comes for those cut of this refresh
	}
	past := max(0, n-fresh) // this refresh's, cut before they were shown
	if n > 0 {
		m.events = slices.Delete(m.events, 0, n)
	}
	if left > 0 || past > 0 {
		m.appendEvent(m.gapEvent(read+1, read+left+uint64(past), left))
	}
	// Read up to the newest: whatever kept them unread is over.
	m.evWhy = ""
}

func (m *Model) appendEvent(ev engine.Event) {
	m.events = append(m.events, ev)
	if m.evOffset > 0 && m.filterShows(ev) {
		m.evOffset++ // scrolled down: the lines being read stay where they are
	}
}

// localEvent puts a line of the console's own into the events log (a
// failed action, which the engine never saw).
func (m *Model) localEvent(msg string) { m.localEventOn("", msg) }

// localEventOn is localEvent filed under an endpoint ("" for none), so
// that filtering the events by it ("/") shows the line.
func (m *Model) localEventOn(endpoint, msg string) {
	m.events = append(m.events, engine.Event{Time: m.opts.Now(), Type: "console", Endpoint: endpoint, Actor: engine.ActorConsole, Message: msg})
}

func (m *Model) resizeSparks() {
	w := m.sparkWidth()
	for _, sp := range m.sparks {
		sp.resize(w)
	}
	m.sparkTop = drawShared(m.sparks, m.styles)
}

// onActionDone shows a control call's result and refreshes at once, so
// the screen answers the key.
func (m Model) onActionDone(msg actionDoneMsg) (tea.Model, tea.Cmd) {
	if msg.act.kind == actHedge && m.stepped.delay > 0 {
		m.stepped.landed = true
		if msg.err != nil {
			m.stepped = steppedDelay{} // the engine kept the delay it had
		}
	}
	if msg.err != nil {
		m.status = statusLine{text: "✗ " + msg.act.desc + ": " + msg.err.Error(), err: true}
		m.localEventOn(msg.act.endpoint, "failed: "+msg.act.desc+": "+msg.err.Error())
		if p, ok := engine.IsPromotionRefused(msg.err); ok && msg.act.kind == actRole && !msg.act.force && m.overlay == overlayNone {
			// The engine judged on newer figures than the question did:
			// it says so, and forcing is offered, never done.
			m.confirm, m.overlay = forceQuestion(p, msg.act), overlayConfirm
		}
		return m, nil
	}
	m.status = statusLine{text: "✓ " + msg.act.desc}
	if m.overlay == overlayTuning {
		m.tuning.cursor = 0 // the current row: what was just applied
	}
	cmd := tea.Batch(m.refresh(), m.fetchTuning(true))
	return m, cmd
}

// followCursors keeps each cursor on the row it was on, by name: methods
// are sorted by name, so a method first seen (a client's eth_chainId)
// moved the cursor from eth_getBalance to the row that took its place, and
// the next + or - changed a method the operator had not chosen. A row
// that is gone leaves the cursor where it was (clamped).
func (m *Model) followCursors(endpoint, method string) {
	if i := slices.IndexFunc(m.snap.Endpoints, func(e engine.EndpointSnapshot) bool { return e.Name == endpoint }); i >= 0 {
		m.epCursor = i
	}
	m.lostMethod = ""
	if method != "" {
		if i := slices.Index(m.methodNames(), method); i >= 0 {
			m.mCursor = i + 1
		} else {
			m.lostMethod = method
		}
	}
}

// selected is the endpoint under the cursor.
func (m Model) selected() (engine.EndpointSnapshot, bool) {
	if !m.haveSnap || len(m.snap.Endpoints) == 0 {
		return engine.EndpointSnapshot{}, false
	}
	return m.snap.Endpoints[clamp(m.epCursor, 0, len(m.snap.Endpoints)-1)], true
}

// methodNames are the methods in a stable order (by name).
func (m Model) methodNames() []string {
	names := make([]string, 0, len(m.snap.Methods))
	for name := range m.snap.Methods {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// selectedMethod is the method row under the cursor; "" is "all methods".
func (m Model) selectedMethod() string {
	names := m.methodNames()
	if m.mCursor <= 0 || m.mCursor > len(names) {
		return ""
	}
	return names[m.mCursor-1]
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

// engineNow is the engine's clock now. The instants a Snapshot gives (a
// fault's end, a back-off's, the Snapshot's own time) are the engine's:
// attached to a host whose clock is 5 minutes behind this one, the local
// clock read every fresh Snapshot as 5 minutes old and every fault as over.
func (m Model) engineNow() time.Time { return m.opts.Now().Add(-m.clockAhead) }

// WithStatus starts the console with a note in the status line.
func (m Model) WithStatus(text string) Model {
	m.status = statusLine{text: text}
	return m
}
