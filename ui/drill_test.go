package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

var drillSteps = []string{"serving", "inject", "cut out", "traffic moved", "no client errors", "clear", "readmitted"}

// fakeDrill stands in for bench's drill: it records the modes it was run
// with and reports its steps (failing at failAt, or waiting for its
// context at blockAt).
type fakeDrill struct {
	mu      sync.Mutex
	modes   []string
	failAt  int // -1: none
	blockAt int // -1: none
	failWhy string
	ended   chan error
}

func newFakeDrill() *fakeDrill {
	return &fakeDrill{failAt: -1, blockAt: -1, ended: make(chan error, 1)}
}

func (f *fakeDrill) run(ctx context.Context, mode string, onStep func(DrillStep)) (err error) {
	defer func() { f.ended <- err }()
	f.mu.Lock()
	f.modes = append(f.modes, mode)
	f.mu.Unlock()
	for i, name := range drillSteps {
		onStep(DrillStep{Index: i, Name: name, State: DrillRunning})
		if i == f.blockAt {
			<-ctx.Done()
			onStep(DrillStep{Index: i, Name: name, State: DrillFailed, Took: time.Second, Summary: ctx.Err().Error()})
			return ctx.Err()
		}
		if i == f.failAt {
			why := "alpha still routable after 30s"
			if f.failWhy != "" {
				why = f.failWhy
			}
			onStep(DrillStep{Index: i, Name: name, State: DrillFailed, Took: 30 * time.Second, Summary: why,
				Evidence: []string{"breaker closed, 0 consecutive failures", "412 reads, 0 failed"}})
			return errors.New(`step "` + name + `" failed: ` + why) // as main hands it over, without "drill: "
		}
		onStep(DrillStep{Index: i, Name: name, State: DrillPassed, Took: time.Duration(i+1) * 100 * time.Millisecond, Summary: name + " ok"})
	}
	return nil
}

func (f *fakeDrill) taken() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.modes
	f.modes = nil
	return out
}

// cutOutWords stands in for bench.DrillCutOutRule (main hands the console
// bench's): what the drill checks of the cut-out, by mode.
func cutOutWords(mode string, failures int) string {
	what := "failed attempts"
	if mode == "timeout" {
		what = "failed or overdue attempts"
	}
	return fmt.Sprintf("its breaker cuts it out within breaker.failures (%d) %s, plus up to 2 that were in flight", failures, what)
}

func drillConsole(t *testing.T, f *fakeDrill, readonly bool) Model {
	t.Helper()
	r := newRig(t, "alpha", "beta")
	m := New(Options{Backend: Local{Engine: r.eng}, ReadOnly: readonly, Location: time.UTC,
		Drill: &Drill{Run: f.run, Steps: drillSteps, Modes: []string{"error", "timeout", "http429", "stale", "latency"}, Load: "It sends up to 20 reads a second of its own",
			CutOut: cutOutWords}})
	mm, _ := m.Update(sizeMsg(100, 30))
	return refreshed(t, mm.(Model))
}

// D asks, saying what the drill will do; only y runs it, with the mode
// chosen; its steps show as they come, and the verdict.
func TestUpdate_DrillAsksThenRunsAndShowsItsSteps(t *testing.T) {
	f := newFakeDrill()
	m := drillConsole(t, f, false)
	m = press(t, m, "D")
	v := m.View()
	if m.overlay != overlayDrill || !strings.Contains(v, "Run a failover drill?") || !strings.Contains(v, "error fault") ||
		!strings.Contains(m.drillQuestion(), "checks that its breaker cuts it out within breaker.failures (3) failed attempts, plus up to 2 that were in flight, and that reads move") ||
		!strings.Contains(m.drillQuestion(), "cleared whatever happens") {
		t.Fatalf("D did not ask what it will do:\n%s", v)
	}
	// The bound said is the chosen mode's.
	if q := press(t, m, "right").drillQuestion(); !strings.Contains(q, "(3) failed or overdue attempts, plus up to 2") {
		t.Fatalf("→ to timeout: %q", q)
	}
	m = press(t, m, "n")
	if m.overlay != overlayNone || len(f.taken()) != 0 {
		t.Fatal("n ran the drill")
	}
	m = press(t, m, "D", "right", "enter") // enter is no
	if len(f.taken()) != 0 || m.overlay != overlayNone {
		t.Fatal("enter ran the drill")
	}
	m = press(t, m, "D", "right", "y")
	if got := f.taken(); len(got) != 1 || got[0] != "timeout" {
		t.Fatalf("drill runs %v, want [timeout]", got)
	}
	<-f.ended
	v = m.View()
	if m.drill.phase != drillDone || strings.Count(m.drillView(90), "✓") != len(drillSteps) || !strings.Contains(v, "PASSED") || !strings.Contains(m.status.text, "✓ failover drill passed") {
		t.Fatalf("after the drill:\n%s", v)
	}
	m = press(t, m, "enter")
	if m.overlay != overlayNone {
		t.Fatal("enter did not close the verdict")
	}
}

// A failed step shows with its evidence, and the console logs it.
func TestUpdate_DrillFailureNamesTheStep(t *testing.T) {
	f := newFakeDrill()
	f.failAt = 2
	m := press(t, drillConsole(t, f, false), "D", "y")
	<-f.ended
	v := m.View()
	if !strings.Contains(v, "✗") || !strings.Contains(v, "FAILED") || !strings.Contains(v, "cut out") || !strings.Contains(v, "412 reads, 0 failed") {
		t.Fatalf("failed drill:\n%s", v)
	}
	if !m.status.err || !strings.Contains(m.events[len(m.events)-1].Message, `step "cut out" failed`) {
		t.Fatalf("status %q, last event %+v", m.status.text, m.events[len(m.events)-1])
	}
}

// esc hides a running drill (it goes on, D shows it again); x aborts it,
// and so does quitting the console. An aborted drill is no verdict: it
// read "FAILED after 2s at step 3", a failover that never failed.
func TestUpdate_DrillHidesAbortsAndStopsWithTheConsole(t *testing.T) {
	f := newFakeDrill()
	f.blockAt = 2
	m := press(t, drillConsole(t, f, false), "D")
	mm, cmd := m.Update(keyMsg("y"))
	m = mm.(Model)
	// Take the messages up to the blocking step, without waiting for more.
	for !(m.drill.steps[2].State == DrillRunning) {
		mm, cmd = m.Update(cmd())
		m = mm.(Model)
	}
	m = press(t, m, "esc")
	if m.overlay != overlayNone || m.drill.phase != drillRunning {
		t.Fatalf("esc: overlay %v, phase %v", m.overlay, m.drill.phase)
	}
	m = press(t, m, "D")
	if m.overlay != overlayDrill || !strings.Contains(m.View(), "x aborts") {
		t.Fatalf("D did not show the running drill:\n%s", m.View())
	}
	m = press(t, m, "x")
	m = settle(t, m, cmd)
	if err := <-f.ended; !errors.Is(err, context.Canceled) || m.drill.phase != drillDone {
		t.Fatalf("abort: drill ended with %v, phase %v", err, m.drill.phase)
	}
	if v := m.View(); !strings.Contains(v, "ABORTED") || strings.Contains(v, "FAILED") || strings.Contains(v, "✗") ||
		m.status.err || !strings.Contains(m.status.text, "aborted during step 3") {
		t.Fatalf("abort: status %q (error %v), view:\n%s", m.status.text, m.status.err, v)
	}

	// Quitting while one runs stops it.
	f2 := newFakeDrill()
	f2.blockAt = 0
	m = press(t, drillConsole(t, f2, false), "D")
	mm, cmd = m.Update(keyMsg("y"))
	m = mm.(Model)
	mm, _ = m.Update(cmd()) // the first step
	m = mm.(Model)
	mm, _ = m.Update(keyMsg("q")) // q hides the drill's box, as esc does
	if m = mm.(Model); m.overlay != overlayNone || m.quitting {
		t.Fatalf("q at the running drill: overlay %v, quitting %v", m.overlay, m.quitting)
	}
	m.Update(keyMsg("q"))
	select {
	case err := <-f2.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("quit: drill ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("quitting did not stop the drill")
	}
}

// D changes the engine: a read-only console refuses it, and a console
// without a drill says so.
func TestUpdate_DrillRefusedReadOnlyAndWithoutADrill(t *testing.T) {
	f := newFakeDrill()
	m := press(t, drillConsole(t, f, true), "D", "y")
	if m.overlay != overlayNone || !strings.Contains(m.status.text, "read-only") || len(f.taken()) != 0 {
		t.Fatalf("read-only: overlay %v, status %q", m.overlay, m.status.text)
	}
	r := newRig(t, "alpha")
	plain := console(t, Local{Engine: r.eng}, 100, 30, false)
	plain = press(t, plain, "D")
	if plain.overlay != overlayNone || !strings.Contains(plain.status.text, "no failover drill") {
		t.Fatalf("no drill: overlay %v, status %q", plain.overlay, plain.status.text)
	}
}

// The drill overlay, asked, running and failed, at 100×30.
func TestDrillView_Goldens(t *testing.T) {
	d := &Drill{Steps: drillSteps, Modes: []string{"error", "timeout"}, Load: "It sends up to 20 reads a second of its own to http://127.0.0.1:8545",
		Run: func(context.Context, string, func(DrillStep)) error { return nil }, CutOut: cutOutWords}
	base := func() Model {
		m := fixedModel(healthySnapshot(), themes.Default(), 100, 30)
		m.opts.Drill = d
		m.snap.Settings = engineSettings()
		m.overlay = overlayDrill
		return m
	}
	ask := base()
	running := base()
	running.drill = drillState{phase: drillRunning, started: fixedNow().Add(-4 * time.Second)}
	for i, name := range drillSteps {
		s := DrillStep{Index: i, Name: name}
		switch {
		case i < 2:
			s.State, s.Took, s.Summary = DrillPassed, time.Duration(300*(i+1))*time.Millisecond, []string{"alpha serves 63% of reads and is the best healthy endpoint (p50 42ms)", "error fault on alpha"}[i]
		case i == 2:
			s.State = DrillRunning
		}
		running.drill.steps = append(running.drill.steps, s)
	}
	failed := running
	failed.drill.phase, failed.drill.took = drillDone, 34*time.Second
	failed.drill.err = errors.New(`step "cut out" failed: alpha still routable after 30s`)
	failed.drill.steps = append([]DrillStep(nil), running.drill.steps...)
	failed.drill.steps[2] = DrillStep{Index: 2, Name: "cut out", State: DrillFailed, Took: 30 * time.Second, Summary: "alpha still routable after 30s",
		Evidence: []string{"breaker closed, 0 consecutive failures", "412 reads, 0 failed"}}
	for name, m := range map[string]Model{"drill-ask": ask, "drill-running": running, "drill-failed": failed} {
		t.Run(name, func(t *testing.T) {
			got := m.View()
			checkFits(t, got, 100, 30)
			golden(t, filepath.Join("testdata", name+"_100x30.golden"), got)
		})
	}
}

func engineSettings() engine.Settings {
	return engine.Settings{BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: 10 * time.Second, RouterTolerance: 0.1, RequestTimeout: 10 * time.Second}
}

// A step's summary longer than its two lines ends in "…" rather than
// stopping mid-sentence as if that were all it said.
func TestView_DrillStepSummaryCutSaysSo(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 80, 24)
	m.opts.Drill = &Drill{Steps: drillSteps, Modes: []string{"latency"}}
	m.drill = drillState{phase: drillDone, steps: []DrillStep{{Index: 6, Name: "readmitted", State: DrillPassed, Took: 9900 * time.Millisecond,
		Summary: "steady readmitted 9.825s after the fault was cleared (open 10s, then half-open for 3 trial successes over 0.4s, each answered in time)"}}}
	got := m.drillView(72)
	lines := strings.Split(got, "\n")
	if len(lines) < 4 || !strings.HasSuffix(strings.TrimRight(lines[3], " "), "…") {
		t.Fatalf("the cut summary does not end in …:\n%s", got)
	}
}

// The tester's case: a long reason (the readmission step's), which the
// status line and the events row cut. The status line names the step and
// says that D shows why; D shows the result, the reason whole, rather than
// a new question, until D in it asks for another (declining it keeps the
// result); the text says "drill" once.
func TestUpdate_DrillResultStaysReadableOnD(t *testing.T) {
	f := newFakeDrill()
	f.failAt = 6
	f.failWhy = "tail was not readmitted within 1m15s of clearing the fault (tail's breaker is open, cooldown 1m20s, up from breaker.cooldown 10s as it flapped: " +
		"next trial at 12:42:40 (1m19s after the clear), then 3 trial successes in a row (probes every 2s); gives up at 12:43:10): routable false, breaker open (0 trial successes), " +
		"lag-excluded false, backing off false"
	m := press(t, drillConsole(t, f, false), "D", "y")
	<-f.ended
	if !m.status.err || !strings.Contains(m.status.text, "failed at step 7 readmitted") || !strings.Contains(m.status.text, "D shows why") || len(m.status.text) > 100 {
		t.Errorf("status %q", m.status.text)
	}
	ev := m.events[len(m.events)-1].Message
	if !strings.Contains(ev, "gives up at 12:43:10): routable false") || strings.Contains(ev, "drill: drill:") || strings.Count(ev, "drill") != 1 {
		t.Errorf("event %q", ev)
	}
	m = press(t, m, "esc")
	m = press(t, m, "D")
	if m.overlay != overlayDrill || m.drill.phase != drillDone || strings.Contains(m.View(), "Run a failover drill?") {
		t.Fatalf("D after the drill did not show its result:\n%s", m.View())
	}
	// Every word of the reason is on the screen, at 100×30.
	flat := strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
	inner := strings.NewReplacer("║", "", "│", "").Replace(flat)
	inner = strings.Join(strings.Fields(inner), " ")
	if !strings.Contains(inner, f.failWhy) || !strings.Contains(inner, "FAILED") {
		t.Fatalf("the reason is not shown whole:\n%s", m.View())
	}
	m = press(t, m, "D")
	if m.drill.phase != drillAsk || !strings.Contains(m.View(), "Run a failover drill?") {
		t.Fatalf("D in the result did not ask for another:\n%s", m.View())
	}
	m = press(t, m, "n", "D")
	if m.drill.phase != drillDone || !strings.Contains(m.View(), "FAILED") {
		t.Fatalf("declining another lost the result:\n%s", m.View())
	}
}

// The question says that readmission waits as long as the breaker says,
// and names the endpoints whose breaker would make that longer than
// breaker.cooldown now: tail flapped, and is closed again; head is open
// with a doubled cooldown.
func TestDrillQuestion_SaysTheBreakersOwnCooldown(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 100, 30)
	m.opts.Drill = &Drill{Steps: drillSteps, Modes: []string{"error"}, Load: "It sends up to 20 reads a second of its own",
		Run: func(context.Context, string, func(DrillStep)) error { return nil }}
	m.snap.Settings = engineSettings()
	m.snap.Endpoints[0].Breaker = engine.BreakerSnapshot{State: engine.BreakerClosed, Cooldown: 10 * time.Second, Flaps: 1}
	m.snap.Endpoints[1].Breaker = engine.BreakerSnapshot{State: engine.BreakerOpen, Cooldown: 80 * time.Second, Flaps: 1,
		OpenedAt: t0.Add(-16 * time.Second), NextTrialAt: t0.Add(64 * time.Second)}
	q := m.drillQuestion()
	for _, want := range []string{"readmitted after its breaker's cooldown", "waiting as long as the breaker says (its next trial time: breaker.cooldown 10s, doubled when it flaps or a trial fails)",
		"alchemy flapped lately: a drill on it opens its breaker for longer than 10s", "infura's cooldown is 1m20s (it flapped)"} {
		if !strings.Contains(q, want) {
			t.Errorf("question lacks %q:\n%s", want, q)
		}
	}
	if strings.Contains(q, "after the cooldown (10s)") {
		t.Errorf("question still promises breaker.cooldown:\n%s", q)
	}
}

// While readmission waits, the step says for what (bench reports it again,
// still running): the overlay shows it whole, the breaker's cooldown and
// next trial included.
func TestView_DrillRunningStepSaysWhatItWaitsFor(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 100, 30)
	m.opts.Drill = &Drill{Steps: drillSteps, Modes: []string{"error"}}
	m.overlay = overlayDrill
	m.drill = drillState{phase: drillRunning, started: fixedNow().Add(-40 * time.Second)}
	for i, name := range drillSteps {
		s := DrillStep{Index: i, Name: name, State: DrillPassed, Took: time.Second, Summary: name + " ok"}
		if i == 6 {
			s = DrillStep{Index: i, Name: name, State: DrillRunning, Summary: "waiting: tail's breaker is open, cooldown 1m20s, up from breaker.cooldown 10s as it flapped: " +
				"next trial at 12:42:40 (1m19s after the clear), then 3 trial successes in a row (probes every 2s); gives up at 12:43:10"}
		}
		m.drill.steps = append(m.drill.steps, s)
	}
	v := m.View()
	checkFits(t, v, 100, 30)
	inner := strings.Join(strings.Fields(strings.Join(boxLines(v), " ")), " ")
	if !strings.Contains(inner, m.drill.steps[6].Summary) {
		t.Fatalf("the wait is not shown whole:\n%s", v)
	}
}
