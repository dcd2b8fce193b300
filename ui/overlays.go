package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/engine"
)

// confirmDialog asks before a destructive action; only y says yes. back
// is the overlay it returns to (none, or the view that asked).
type confirmDialog struct {
	question string
	act      action
	back     overlay
	// then is a second question y opens instead of acting (forcing a
	// promotion the engine would refuse); nil: y acts.
	then *confirmDialog
	// figuresNote: the question rests on the pool's figures (a drain's),
	// and ends with what they are as it is drawn (drainFiguresNote).
	figuresNote bool
}

// faultMenu builds a fault: mode, share of requests, added latency (latency
// mode) and a duration. A console fault always has a duration, so it
// always ends.
type faultMenu struct {
	endpoint                      string
	field                         int // faultField*
	mode, rate, latency, duration int
}

const (
	fieldMode = iota
	fieldRate
	fieldLatency
	fieldDuration
	numFields
)

// The values ←/→ step through, lowest first: → goes up on every field.
var (
	faultModes     = engine.FaultModes
	faultRates     = []float64{0.05, 0.1, 0.25, 0.5, 1}
	faultLatencies = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}
	faultDurations = []time.Duration{5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute}
)

func newFaultMenu(endpoint string) faultMenu {
	return faultMenu{endpoint: endpoint, rate: len(faultRates) - 1, latency: 2, duration: 3}
}

func (f faultMenu) spec() engine.FaultSpec {
	s := engine.FaultSpec{Mode: faultModes[f.mode], Rate: faultRates[f.rate], Duration: engine.Duration(faultDurations[f.duration])}
	if s.Mode == engine.FaultLatency {
		s.Latency = engine.Duration(faultLatencies[f.latency])
	}
	if s.Mode == engine.FaultStale {
		s.Rate = 1 // stale applies to the whole endpoint
	}
	return s
}

// describe says in words what the fault will do.
func (f faultMenu) describe() string {
	s := f.spec()
	what := map[engine.FaultMode]string{
		engine.FaultLatency:     "adds " + fmtDelay(s.Latency.D()) + " before",
		engine.FaultError:       "answers HTTP 500 to",
		engine.Fault429:         "answers HTTP 429 to",
		engine.FaultTimeout:     "holds unanswered (reads race on at their attempt deadline; what it holds goes on when it ends)",
		engine.FaultStale:       "freezes the head it reports, for",
		engine.FaultRefused:     "refuses the connection (nothing sent) to",
		engine.FaultUnreachable: "leaves the connection unanswered (nothing sent; fails at the dial timeout, a write at its connect bound) for",
	}[s.Mode]
	share := fmt.Sprintf("%.0f%% of", 100*s.Rate)
	if s.Mode == engine.FaultStale {
		share = "all"
	}
	return fmt.Sprintf("%s fault on %s: rpcdash %s %s its requests (clients and probes) for %s, then it clears itself.",
		s.Mode, f.endpoint, what, share, fmtSpan(s.Duration.D()))
}

// inputKind is what the one-line input is for.
type inputKind int

const (
	inputFilter inputKind = iota
	inputDelay
)

func (m *Model) openInput(kind inputKind) {
	m.inputKind = kind
	m.input.Reset()
	m.input.CharLimit = 64
	switch kind {
	case inputFilter:
		m.input.Prompt = "filter events by endpoint: "
		m.input.Placeholder = "name (empty: all)"
		m.input.SetValue(m.evFilter)
	case inputDelay:
		// The method named in the prompt is the one set, whatever the
		// methods panel does while the operator types.
		m.inputMethod = m.selectedMethod()
		m.input.Prompt = "hedge delay of " + m.delayTarget() + ": "
		m.input.Placeholder = "120ms, 1.5s or auto"
	}
	m.input.Focus()
	m.overlay = overlayInput
}

// dropViewHint clears a status line about the keys of a view now closed.
func (m *Model) dropViewHint() {
	if m.status.viewHint {
		m.status = statusLine{}
	}
}

// menuNames are the overlays that act once filled in, as a cancelled
// one is named on the status line.
var menuNames = map[overlay]string{overlayFault: "fault menu", overlayRole: "role menu", overlayInput: "input"}

// onOverlayKey handles keys while an overlay is open; Esc closes any, and
// so does q (but in the text input, where it is a letter).
func (m Model) onOverlayKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	if key.Matches(msg, k.Esc) || m.overlay != overlayInput && key.Matches(msg, k.Quit) {
		if menu, ok := menuNames[m.overlay]; ok {
			// Else the status line kept what an earlier action said
			// ("cancelled: failover drill") as if it were this menu's.
			if m.overlay == overlayInput {
				menu = map[inputKind]string{inputFilter: "events filter", inputDelay: "hedge delay"}[m.inputKind]
			}
			m.status = statusLine{text: "cancelled: " + menu}
		}
		m.overlay = overlayNone
		m.dropViewHint()
		if m.confirm.act.desc != "" {
			m.overlay = m.confirm.back
			m.status = statusLine{text: "cancelled: " + m.confirm.act.desc}
			m.confirm = confirmDialog{}
		}
		m.input.Blur()
		return m, nil
	}
	switch m.overlay {
	case overlayHelp, overlayDetail:
		switch {
		case key.Matches(msg, k.Help) || key.Matches(msg, k.Enter):
			m.overlay = overlayNone
			m.dropViewHint()
		case m.overlay != overlayDetail:
		case key.Matches(msg, k.Up):
			m.detailTop--
		case key.Matches(msg, k.Down):
			m.detailTop++
		case key.Matches(msg, k.Top):
			m.detailTop = 0
		default:
			// d, f, c … act on the panels, not from the detail: said,
			// rather than a key that seemed to do nothing.
			ep, _ := m.selected()
			m.status = statusLine{text: msg.String() + ": not in the detail (j/k scroll, esc closes; then keys act on " + ep.Name + ")", viewHint: true}
		}
		if m.overlay == overlayDetail {
			_, top, _ := m.detailWindow()
			m.detailTop = top
		}
	case overlayConfirm:
		a, then := m.confirm.act, m.confirm.then
		m.overlay, m.confirm = m.confirm.back, confirmDialog{}
		if key.Matches(msg, k.Yes) && then != nil {
			next := *then
			next.back = m.overlay
			m.confirm, m.overlay = next, overlayConfirm
			return m, nil
		}
		if key.Matches(msg, k.Yes) {
			return m.do(a)
		}
		m.status = statusLine{text: "cancelled: " + a.desc}
	case overlayTuning:
		return m.onTuningKey(msg)
	case overlayDrill:
		return m.onDrillKey(msg)
	case overlayFault:
		return m.onFaultKey(msg)
	case overlayRole:
		return m.onRoleKey(msg)
	case overlayInput:
		if msg.Type == tea.KeyEnter {
			return m.submitInput()
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	}
	return m, nil
}

// menuNav is the keys the fault and role menus share: ↑/↓ and tab move
// *field through n fields; ←/→ return the step (-1, +1) for the selected
// field's value, 0 for every other key.
func (m Model) menuNav(msg tea.KeyMsg, field *int, n int) int {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		step(field, n, -1)
	case key.Matches(msg, k.Down), key.Matches(msg, k.Tab):
		step(field, n, 1)
	case key.Matches(msg, k.Left):
		return -1
	case key.Matches(msg, k.Right):
		return 1
	}
	return 0
}

func (m Model) onFaultKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k, f := m.keys, &m.fault
	switch d := m.menuNav(msg, &f.field, numFields); {
	case d != 0:
		switch f.field {
		case fieldMode:
			step(&f.mode, len(faultModes), d) // a list of names: it wraps
		case fieldRate:
			m.stepOrSay(&f.rate, len(faultRates), d, "rate", func(i int) string { return fmt.Sprintf("%.0f%%", 100*faultRates[i]) })
		case fieldLatency:
			m.stepOrSay(&f.latency, len(faultLatencies), d, "latency", func(i int) string { return fmtDelay(faultLatencies[i]) })
		case fieldDuration:
			m.stepOrSay(&f.duration, len(faultDurations), d, "duration", func(i int) string { return fmtSpan(faultDurations[i]) })
		}
	case key.Matches(msg, k.Enter):
		a := action{kind: actFault, endpoint: f.endpoint, spec: f.spec(),
			desc: fmt.Sprintf("inject %s fault on %s for %s", f.spec().Mode, f.endpoint, fmtSpan(faultDurations[f.duration]))}
		return m.ask("Inject this fault? "+f.describe(), a)
	}
	return m, nil
}

func (m Model) submitInput() (tea.Model, tea.Cmd) {
	v := strings.TrimSpace(m.input.Value())
	m.overlay = overlayNone
	m.input.Blur()
	switch m.inputKind {
	case inputFilter:
		m.evFilter, m.evOffset = v, 0
		if v == "" {
			m.status = statusLine{text: "events: all endpoints"}
		} else {
			m.status = statusLine{text: "events: only " + v + " (/ to change, esc to clear)"}
		}
		return m, nil
	default:
		if v == "" {
			return m, nil
		}
		return m.setDelayOf(m.inputMethod, v)
	}
}

// stepOrSay moves *v by d through n ordered values, stopping at the ends:
// there it stays and the status line says so, as + and - do for the delay
// (a duration past the longest wrapped to the shortest).
func (m *Model) stepOrSay(v *int, n, d int, name string, label func(int) string) {
	if next := *v + d; next >= 0 && next < n {
		*v = next
		if strings.HasPrefix(m.status.text, name+" stops at ") {
			m.status = statusLine{} // it said so of the value it has just left
		}
		return
	}
	end := "highest"
	if d < 0 {
		end = "lowest"
	}
	m.status = statusLine{text: fmt.Sprintf("%s stops at %s, its %s (%s–%s)", name, label(*v), end, label(0), label(n-1))}
}
