package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
)

// The failover drill on D: the drill itself lives in bench, which ui may
// not import, so main hands the console a Drill; the console asks first,
// runs it in a command and shows its steps as they start and end.

// DrillStep is one step of a drill as the console shows it.
type DrillStep struct {
	Index    int
	Name     string
	State    string // "running", "passed", "failed" or "interrupted"
	Took     time.Duration
	Summary  string
	Evidence []string
}

// Step states.
const (
	DrillRunning = "running"
	DrillPassed  = "passed"
	DrillFailed  = "failed"
	// DrillInterrupted: the drill stopped during the step (aborted, or it
	// stopped itself): no verdict on it, marked ■.
	DrillInterrupted = "interrupted"
)

// DrillFunc runs the failover drill against the engine the console shows,
// injecting a fault of the given mode, and reports each step to onStep as
// it starts and as it ends (and a running step again when what it waits
// for changes: its Summary says it). It returns when the drill is over,
// its fault cleared (an error names the step that failed; the console
// shows it after "failover drill: ", so it has no such prefix of its own),
// or when ctx ends.
type DrillFunc func(ctx context.Context, mode string, onStep func(DrillStep)) error

// NoVerdict is a drill's error that says nothing of failover: the drill
// never ran (another drill holds the instance's lease) or it stopped
// itself (the instance restarted, another drill took its lease). The
// console says so instead of FAILED, as rpcdash drill does.
type NoVerdict struct{ Err error }

func (e NoVerdict) Error() string { return e.Err.Error() }
func (e NoVerdict) Unwrap() error { return e.Err }

// Drill is the failover drill a console can run.
type Drill struct {
	Run   DrillFunc
	Steps []string // the steps' names, in order
	Modes []string // the fault modes it takes; the first is the default
	Load  string   // what traffic it judges by, in words
	// CutOut says what the drill checks of the endpoint's cut-out for a
	// mode and breaker.failures, after "checks that" (bench's own words:
	// its in-flight slack included); nil: the question names no bound.
	CutOut func(mode string, failures int) string
}

// drillPhase is where the drill overlay is.
type drillPhase int

const (
	drillAsk drillPhase = iota
	drillRunning
	drillDone
)

// drillState is the console's drill: asked, running or done.
type drillState struct {
	phase   drillPhase
	mode    int
	run     int // which run messages belong to
	steps   []DrillStep
	started time.Time
	took    time.Duration
	err     error
	// aborted: x stopped it, and its error is no verdict on failover (the
	// step it stopped in did not fail).
	aborted bool
	// noVerdict: it never ran or stopped itself (NoVerdict), which says
	// nothing of failover either.
	noVerdict bool
	cancel    context.CancelFunc
	ch        chan tea.Msg
	// last: asked for another from a result (D in it), the result, which
	// D shows again if the question is declined.
	last *drillState
}

type (
	drillStepMsg struct {
		run  int
		step DrillStep
	}
	drillDoneMsg struct {
		run int
		err error
	}
)

// drillKey opens the drill: its progress while one runs, its result once
// one has ended (D in it asks for another), else the question.
func (m Model) drillKey() (tea.Model, tea.Cmd) {
	d := m.opts.Drill
	if d == nil || d.Run == nil || len(d.Modes) == 0 {
		m.status = statusLine{text: "no failover drill in this console", err: true}
		return m, nil
	}
	if m.drill.phase == drillAsk {
		m.drill = drillState{phase: drillAsk, run: m.drill.run, last: m.drill.last}
	}
	m.overlay = overlayDrill
	return m, nil
}

// drillQuestion says what the drill will do, with the thresholds it will
// judge by: the readmission's wait is the breaker's own, which can be
// longer than breaker.cooldown, and it says which endpoints' are now.
func (m Model) drillQuestion() string {
	d, s := m.opts.Drill, m.snap.Settings
	mode := d.Modes[m.drill.mode]
	article := "a"
	if strings.IndexByte("aeiouh", mode[0]) >= 0 { // "an error", "an http429"
		article = "an"
	}
	cut := "it is cut out of routing"
	if d.CutOut != nil {
		cut = d.CutOut(mode, s.BreakerFailures)
	}
	q := fmt.Sprintf("Run a failover drill? It finds the endpoint that serves reads now, injects %s %s fault on it, "+
		"checks that %s, and that reads move to the others with no client error, "+
		"clears the fault, and checks that it is readmitted after its breaker's cooldown and breaker.successes (%d) trial successes, "+
		"waiting as long as the breaker says (its next trial time: breaker.cooldown %s, doubled when it flaps or a trial fails).",
		article, mode, cut, s.BreakerSuccesses, fmtSpan(s.BreakerCooldown))
	if notes := m.cooldownNotes(); len(notes) > 0 {
		q += " Now " + strings.Join(notes, "; ") + "."
	}
	return q + fmt.Sprintf(" %s. The fault is cleared whatever happens (x aborts).", d.Load)
}

// cooldownNotes name the endpoints whose breaker would keep the drill
// waiting longer than breaker.cooldown: open with a longer cooldown now,
// or closed after flapping (opened again soon, it doubles the cooldown it
// last served).
func (m Model) cooldownNotes() []string {
	base := m.snap.Settings.BreakerCooldown
	var notes []string
	for _, ep := range m.snap.Endpoints {
		b := ep.Breaker
		why := b.WhyLonger()
		switch {
		case b.State != engine.BreakerClosed && b.Cooldown > base:
			note := ep.Name + "'s cooldown is " + fmtSpan(b.Cooldown)
			if len(why) > 0 {
				note += " (" + strings.Join(why, ", ") + ")"
			}
			notes = append(notes, note)
		case b.State == engine.BreakerClosed && b.Flaps > 0:
			notes = append(notes, ep.Name+" flapped lately: a drill on it opens its breaker for longer than "+fmtSpan(base))
		}
	}
	return notes
}

func (m Model) onDrillKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k, d := m.keys, &m.drill
	switch d.phase {
	case drillAsk:
		switch {
		case key.Matches(msg, k.Left), key.Matches(msg, k.Right):
			step := 1
			if key.Matches(msg, k.Left) {
				step = -1
			}
			n := len(m.opts.Drill.Modes)
			d.mode = (d.mode + step + n) % n
		case key.Matches(msg, k.Yes):
			return m.startDrill()
		default:
			m.overlay = overlayNone
			m.status = statusLine{text: "cancelled: failover drill"}
			if d.last != nil {
				m.drill = *d.last
			}
		}
	case drillRunning:
		if key.Matches(msg, k.Abort) && d.cancel != nil {
			d.cancel()
			d.aborted = true
			m.status = statusLine{text: "… aborting the drill (its fault is cleared)"}
		}
	case drillDone:
		switch {
		case msg.Type == tea.KeyEnter:
			m.overlay = overlayNone
		case key.Matches(msg, k.Drill):
			last := *d
			m.drill = drillState{phase: drillAsk, run: d.run, mode: d.mode, last: &last}
		}
	}
	return m, nil
}

// startDrill runs the drill in a command; its steps come back one message
// at a time through a channel large enough that the drill never waits on
// the console.
func (m Model) startDrill() (tea.Model, tea.Cmd) {
	d := m.opts.Drill
	mode := d.Modes[m.drill.mode]
	ctx, cancel := context.WithCancel(context.Background())
	run := m.drill.run + 1
	ch := make(chan tea.Msg, 4*len(d.Steps)+8)
	m.drill = drillState{phase: drillRunning, mode: m.drill.mode, run: run, started: m.opts.Now(), cancel: cancel, ch: ch}
	for i, name := range d.Steps {
		m.drill.steps = append(m.drill.steps, DrillStep{Index: i, Name: name})
	}
	m.status = statusLine{text: "… failover drill: " + mode + " fault"}
	runDrill := d.Run
	start := func() tea.Msg {
		go func() {
			defer cancel()
			err := runDrill(ctx, mode, func(s DrillStep) {
				select {
				case ch <- drillStepMsg{run: run, step: s}:
				default: // never block the drill on the console
				}
			})
			ch <- drillDoneMsg{run: run, err: err}
		}()
		return <-ch
	}
	return m, start
}

func waitDrill(ch chan tea.Msg) tea.Cmd { return func() tea.Msg { return <-ch } }

func (m *Model) onDrillStep(msg drillStepMsg) tea.Cmd {
	d := &m.drill
	if msg.run != d.run || d.phase != drillRunning {
		return nil
	}
	s := msg.step
	for len(d.steps) <= s.Index {
		d.steps = append(d.steps, DrillStep{Index: len(d.steps)})
	}
	d.steps[s.Index] = s
	if m.overlay != overlayDrill {
		m.status = statusLine{text: fmt.Sprintf("… drill step %d/%d %s: %s", s.Index+1, len(d.steps), s.Name, s.State)}
	}
	return waitDrill(d.ch)
}

func (m *Model) onDrillDone(msg drillDoneMsg) {
	d := &m.drill
	if msg.run != d.run {
		return
	}
	d.phase, d.err, d.took, d.cancel, d.ch = drillDone, msg.err, m.opts.Now().Sub(d.started), nil, nil
	d.noVerdict = msg.err != nil && errors.As(msg.err, new(NoVerdict))
	if d.noVerdict && !d.aborted {
		text := "failover drill not run, no verdict: " + msg.err.Error()
		if s, ok := d.failedStep(); ok {
			text = fmt.Sprintf("failover drill stopped during step %d %s after %s, no verdict · D shows why", s.Index+1, s.Name, fmtAge(d.took))
		}
		m.status = statusLine{text: text, err: true}
		m.localEvent("failover drill stopped, no verdict: " + msg.err.Error())
		return
	}
	if msg.err != nil && d.aborted {
		text := "failover drill aborted after " + fmtAge(d.took) + ": no verdict"
		if s, ok := d.failedStep(); ok {
			text = fmt.Sprintf("failover drill aborted during step %d %s after %s: no verdict · D shows it", s.Index+1, s.Name, fmtAge(d.took))
		}
		m.status = statusLine{text: text}
		m.localEvent("failover drill aborted: " + msg.err.Error())
		return
	}
	if msg.err != nil {
		// The reason is long: the status line names the step, D shows it
		// whole (the events log keeps it too).
		text := "✗ failover drill: " + msg.err.Error()
		if s, ok := d.failedStep(); ok {
			text = fmt.Sprintf("✗ failover drill failed at step %d %s after %s · D shows why", s.Index+1, s.Name, fmtAge(d.took))
		}
		m.status = statusLine{text: text, err: true}
		m.localEvent("failover drill failed: " + msg.err.Error())
	} else {
		m.status = statusLine{text: "✓ failover drill passed in " + fmtAge(d.took)}
	}
}

// failedStep is the step the drill failed at, or stopped in, if any.
func (d drillState) failedStep() (DrillStep, bool) {
	for _, s := range d.steps {
		if s.State == DrillFailed || s.State == DrillInterrupted {
			return s, true
		}
	}
	return DrillStep{}, false
}

// drillView draws the drill overlay's content in width.
func (m Model) drillView(width int) string {
	st, d := m.styles, m.drill
	var lines []string
	mode := m.opts.Drill.Modes[d.mode]
	if d.phase == drillAsk {
		lines = append(lines, st.warn.Render("Failover drill"), "",
			"  mode  ‹ "+mode+" ›  "+st.faint.Render("←/→ changes it"), "",
			wrap(m.drillQuestion(), width), "",
			st.accent.Render("y")+" runs it   "+st.accent.Render("n")+" / esc / anything else: no (the default)")
		return strings.Join(lines, "\n")
	}
	lines = append(lines, st.title.Render("Failover drill · "+mode+" fault"), "")
	nameW := 4
	for _, s := range d.steps {
		nameW = max(nameW, len(s.Name))
	}
	for _, s := range d.steps {
		mark, took := "  ", ""
		switch s.State {
		case DrillPassed:
			mark = st.ok.Render("✓ ")
		case DrillFailed:
			mark = st.err.Render("✗ ")
			if d.aborted || d.noVerdict {
				mark = st.warn.Render("■ ") // stopped in it, not failed
			}
		case DrillInterrupted:
			mark = st.warn.Render("■ ") // stopped in it, not failed
		case DrillRunning:
			mark = st.accent.Render("… ")
		}
		if s.State == DrillPassed || s.State == DrillFailed || s.State == DrillInterrupted {
			took = fmt.Sprintf("%5.1fs", s.Took.Seconds())
		}
		head := fmt.Sprintf("%s%d %s %6s  ", mark, s.Index+1, fit(s.Name, nameW), took)
		indent := strings.Repeat(" ", 2+1+1+nameW+1+6+2)
		sumW := max(width-len(indent), 10)
		sum := strings.Split(wrap(s.Summary, sumW), "\n")
		if len(sum) > 2 && s.State == DrillPassed {
			// Two lines a passed step: a longer summary says it goes on.
			// The running step's (what it waits for) and the failed
			// step's reason are shown whole.
			sum = []string{sum[0], ansi.Truncate(strings.TrimRight(sum[1], " ")+" "+strings.TrimLeft(sum[2], " "), sumW, "…")}
		}
		for i, l := range sum {
			if i > 0 {
				head = indent
			}
			lines = append(lines, fit(head+strings.TrimRight(l, " "), width))
		}
		if s.State == DrillFailed || s.State == DrillInterrupted {
			for i, e := range s.Evidence {
				if i == 3 {
					break
				}
				lines = append(lines, fit(st.faint.Render("      "+e), width))
			}
		}
	}
	lines = append(lines, "")
	switch d.phase {
	case drillRunning:
		lines = append(lines, st.faint.Render(fmt.Sprintf("running %s · esc hides it (the drill goes on; D shows it again) · x aborts (its fault is cleared)",
			fmtAge(m.opts.Now().Sub(d.started)))))
	case drillDone:
		if d.aborted && d.err != nil {
			// Its words too: a fault it could not clear says so there.
			lines = append(lines, st.warn.Render(wrap("ABORTED after "+fmtAge(d.took)+", no verdict on failover: "+d.err.Error(), width)))
		} else if s, ok := d.failedStep(); ok && d.noVerdict {
			lines = append(lines, st.warn.Render(fmt.Sprintf("STOPPED after %s during step %d %s, no verdict on failover: why above", fmtAge(d.took), s.Index+1, s.Name)))
		} else if d.noVerdict {
			lines = append(lines, st.warn.Render(wrap("NOT RUN, no verdict on failover: "+d.err.Error(), width)))
		} else if s, ok := d.failedStep(); ok && d.err != nil {
			lines = append(lines, st.err.Render(fmt.Sprintf("FAILED after %s at step %d %s: why above", fmtAge(d.took), s.Index+1, s.Name)))
		} else if d.err != nil {
			lines = append(lines, st.err.Render(wrap("FAILED after "+fmtAge(d.took)+": "+d.err.Error(), width)))
		} else {
			lines = append(lines, st.ok.Render("PASSED in "+fmtAge(d.took)))
		}
		lines = append(lines, st.faint.Render("esc or enter closes (D shows it again) · D asks for another"))
	}
	return strings.Join(lines, "\n")
}
