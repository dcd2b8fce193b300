package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// DrillConfig is one failover drill against a running rpcdash: the
// failover seed's verification plan, automated through the admin API.
type DrillConfig struct {
	RPCURL  string        // the instance's JSON-RPC URL: the drill's own reads go there
	Admin   Admin         // the instance's admin API
	Mode    string        // the fault: error, timeout, http429, stale or latency
	Latency time.Duration // the delay latency mode adds; 0: 2s, past any attempt deadline
	// NoLoad leaves the reads to the instance's own clients; otherwise the
	// drill sends one read at a time, at most Rate per second (0: 20).
	NoLoad bool
	Rate   float64
	// StepTimeout bounds each wait (cut out, traffic moved); 0: 30s.
	// Readmission waits as long as the breaker says, re-read while it
	// waits: until its next trial (next_trial_at), then this (at least
	// what its trials need) for the trials.
	StepTimeout time.Duration
	Seed        int64 // of the reads' params
}

// DrillDefaultMode is the fault a drill injects unless told otherwise: an
// error rate, which every breaker counts.
const DrillDefaultMode = string(engine.FaultError)

// DrillModes are the fault layer's modes, by name, the default first (the
// console's drill picker starts on it).
var DrillModes = func() []string {
	names := []string{DrillDefaultMode}
	for _, m := range engine.FaultModes {
		if string(m) != DrillDefaultMode {
			names = append(names, string(m))
		}
	}
	return names
}()

// The drill's steps, in order.
const (
	StepServing    = "serving"          // which endpoint serves; is it the best healthy one
	StepInject     = "inject"           // a fault on it
	StepCutOut     = "cut out"          // out of routing within breaker.failures failed attempts
	StepMoved      = "traffic moved"    // reads go to the others
	StepNoErrors   = "no client errors" // and none failed
	StepClear      = "clear"            // the fault removed
	StepReadmitted = "readmitted"       // back after the breaker's cooldown (as it reports it) and the trial successes
)

// DrillSteps lists the steps in order.
var DrillSteps = []string{StepServing, StepInject, StepCutOut, StepMoved, StepNoErrors, StepClear, StepReadmitted}

// Step states.
const (
	StepRunning = "running"
	StepPassed  = "passed"
	StepFailed  = "failed"
	// StepInterrupted: the drill stopped during the step (Ctrl-C, SIGTERM,
	// SIGHUP, or it stopped itself): no verdict on it, not a failure.
	StepInterrupted = "interrupted"
)

// DrillStep is one step's report: sent to the callback when it starts and
// when it ends. Plain values only, so a console can show it as it is.
type DrillStep struct {
	Index    int           `json:"index"`
	Name     string        `json:"name"`
	State    string        `json:"state"`
	Started  time.Time     `json:"started"`
	Took     time.Duration `json:"took_ns"`
	Summary  string        `json:"summary"`
	Evidence []string      `json:"evidence,omitempty"`
}

// DrillReport is a finished (or failed) drill.
type DrillReport struct {
	Target   string      `json:"target"`
	Mode     string      `json:"mode"`
	Endpoint string      `json:"endpoint,omitempty"` // the one faulted
	Steps    []DrillStep `json:"steps"`
	Passed   bool        `json:"passed"`
	// Failed is the step that failed; empty when none did (an interrupted
	// drill's step did not fail: InterruptedStep names it).
	Failed string `json:"failed_step,omitempty"`
	// Interrupted: the drill was stopped (Ctrl-C, SIGTERM, SIGHUP) or
	// stopped itself during InterruptedStep: no verdict on failover.
	Interrupted     bool   `json:"interrupted,omitempty"`
	InterruptedStep string `json:"interrupted_step,omitempty"`
	// Cleanup says what became of the fault a drill that stopped early
	// left in place: cleared, or perhaps still there.
	Cleanup string        `json:"cleanup,omitempty"`
	Took    time.Duration `json:"took_ns"`
	// stopped: the drill stopped itself, no verdict (a *drillStopped: its
	// lease taken by another drill, the instance restarted or went away,
	// no client traffic to judge); why says why.
	stopped bool
	why     string
}

// DrillError is a failed step, or one the drill was stopped during
// (Interrupted; Stopped when it stopped itself).
type DrillError struct {
	Step        string
	Summary     string
	Interrupted bool
	Stopped     bool
}

func (e *DrillError) Error() string {
	if e.Stopped {
		return fmt.Sprintf("drill: stopped during step %q: %s", e.Step, e.Summary)
	}
	if e.Interrupted {
		return fmt.Sprintf("drill: interrupted during step %q: %s", e.Step, e.Summary)
	}
	return fmt.Sprintf("drill: step %q failed: %s", e.Step, e.Summary)
}

// Drill runs the failover verification plan against the instance of cfg:
// confirm which endpoint serves and that it is the best healthy one, inject
// the fault on it, check that it is cut out within breaker.failures failed
// attempts, that reads move to the others and that none of them fails,
// clear the fault, and check that it is readmitted after its breaker's
// cooldown (the one in force, which a flap or a failed trial doubles) and
// breaker.successes trial successes. onStep (may be nil) sees each step
// start and end, and the readmission step again, still running, whenever
// what it waits for changes (its Summary says it). A failed step ends the drill with a *DrillError naming it;
// the fault is cleared whatever happens.
func Drill(ctx context.Context, cfg DrillConfig, onStep func(DrillStep)) (*DrillReport, error) {
	if !slices.Contains(DrillModes, cfg.Mode) {
		return nil, fmt.Errorf("drill: --mode %q is not one of %v", cfg.Mode, DrillModes)
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 20
	}
	if cfg.Latency <= 0 {
		cfg.Latency = 2 * time.Second
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = 30 * time.Second
	}
	if onStep == nil {
		onStep = func(DrillStep) {}
	}
	if err := CheckDrillTargets(cfg); err != nil {
		return nil, err
	}
	client := NewClient()
	defer client.CloseIdleConnections()
	admin := cfg.Admin
	admin.Client = client
	// Not cut by a stop: a drill stopped at once still says which step it
	// was stopped in (interrupted, no verdict), as before it had a lease.
	// runCtx stops the drill when another drill takes its lease.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	lease, err := takeDrillLease(context.WithoutCancel(ctx), &admin, cfg.Mode, stopRun)
	if err != nil {
		return nil, err
	}
	defer lease.release() // after the fault is cleared (deferred calls run last first)
	target := fmt.Sprintf("rpcdash at %s (admin %s)", engine.ShownURL(cfg.RPCURL), engine.ShownURL(admin.URL))
	if cfg.NoLoad { // no RPC URL: it judges by the instance's own traffic
		target = fmt.Sprintf("rpcdash with admin %s (its own traffic, no reads of the drill's)", engine.ShownURL(admin.URL))
	}
	d := &drill{cfg: cfg, admin: &admin, stopRun: stopRun, lease: lease, onStep: onStep, started: time.Now(),
		report: &DrillReport{Target: target, Mode: cfg.Mode}}
	if !cfg.NoLoad {
		d.load = newDrillLoad(cfg.RPCURL, client, cfg.Rate, cfg.Seed)
		loadCtx, stopLoad := context.WithCancel(runCtx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			d.load.run(loadCtx)
		}()
		defer func() { stopLoad(); <-done }()
	}
	err = d.run(runCtx)
	d.report.Took = time.Since(d.started)
	d.report.Passed = err == nil
	d.report.Interrupted = err != nil && runCtx.Err() != nil
	var de *DrillError
	switch {
	case errors.As(err, &de) && d.report.Interrupted:
		d.report.InterruptedStep = de.Step
	case errors.As(err, &de):
		d.report.Failed = de.Step
	}
	var why *drillStopped
	if d.report.Interrupted && errors.As(context.Cause(runCtx), &why) {
		d.report.stopped, d.report.why = true, why.text
	}
	err = errors.Join(err, d.cleanup())
	// What became of the lease after the last step began goes with it.
	lease.release()
	if n := len(d.report.Steps); n > 0 {
		d.report.Steps[n-1].Evidence = append(d.report.Steps[n-1].Evidence, lease.takeNotes()...)
	}
	return d.report, err
}

// drill is one run's state.
type drill struct {
	cfg     DrillConfig
	admin   *Admin
	stopRun context.CancelCauseFunc // stops it, no verdict (a *drillStopped says why)
	lease   *drillLease             // nil in tests of a step alone
	load    *drillLoad              // nil with NoLoad
	onStep  func(DrillStep)
	report  *DrillReport
	started time.Time

	settings engine.Settings
	// noErrorsSeen: the instance's error answers as the no-client-errors
	// step looked (noErrorsSince).
	noErrorsSeen int64
	endpoint     string          // the one faulted
	injected     bool            // a fault is in place
	injectedAt   time.Time       //
	injectSeq    uint64          // the last event before the fault
	before       engine.Snapshot // at injection
	// inFlightAtFault: the endpoint's attempts in flight as the fault was
	// put on it, which may still succeed and break a run of failures.
	inFlightAtFault int64
	cutAt           time.Time
	clearedAt       time.Time // when the drill sent its DELETE of the fault
	// rankedOut: the cut was the router ranking it behind the others, its
	// breaker closed (a latency fault on an endpoint slow, not hung).
	rankedOut bool
	// gone: the instance stopped answering its admin API (connection
	// refused past a restart's gap), which stopped the drill.
	gone bool
}

func (d *drill) run(ctx context.Context) error {
	for _, s := range []struct {
		name string
		f    func(context.Context, *DrillStep) error
	}{
		{StepServing, d.serving}, {StepInject, d.inject}, {StepCutOut, d.cutOut}, {StepMoved, d.moved},
		{StepNoErrors, d.noErrors}, {StepClear, d.clear}, {StepReadmitted, d.readmitted},
	} {
		if err := d.step(ctx, s.name, s.f); err != nil {
			return err
		}
	}
	return d.noErrorsSince(ctx)
}

// step runs one step and reports it as it starts and as it ends.
func (d *drill) step(ctx context.Context, name string, f func(context.Context, *DrillStep) error) error {
	s := DrillStep{Index: len(d.report.Steps), Name: name, State: StepRunning, Started: time.Now()}
	d.onStep(s)
	err := f(ctx, &s)
	if ctx.Err() == nil && d.lease != nil {
		// Whatever the step saw, it saw of another instance.
		if restart := restartedSince(ctx, d.admin, d.lease.instance); restart != "" {
			d.stopRun(&drillStopped{text: restart})
			err = context.Cause(ctx)
		}
	}
	s.Took = time.Since(s.Started)
	s.State = StepPassed
	if d.lease != nil {
		s.Evidence = append(s.Evidence, d.lease.takeNotes()...)
	}
	if err != nil && ctx.Err() == nil && d.goneAway(ctx, err) {
		err = context.Cause(ctx)
	}
	if err != nil {
		s.State = StepFailed
		if s.Summary == "" || !errors.As(err, new(*DrillError)) {
			s.Summary = err.Error()
		}
		stopped := ctx.Err() != nil // a stop is no verdict on the step
		var why *drillStopped
		self := stopped && errors.As(context.Cause(ctx), &why)
		switch {
		case self:
			s.Summary = "stopped, no verdict: " + why.Error()
		case stopped:
			s.Summary = "interrupted, no verdict: " + interruptedWords(s.Summary)
		}
		if stopped {
			s.State = StepInterrupted
		}
		err = &DrillError{Step: name, Summary: s.Summary, Interrupted: stopped, Stopped: self}
	}
	d.report.Steps = append(d.report.Steps, s)
	d.onStep(s)
	return err
}

// fail is a failed check: its summary says what was expected and found.
func fail(s *DrillStep, format string, args ...any) error {
	s.Summary = fmt.Sprintf(format, args...)
	return &DrillError{Step: s.Name, Summary: s.Summary}
}

// cleanup clears a fault the drill may have left in place (a failed or
// interrupted drill), with a context of its own, asking again while the
// admin API errors, and says in the report what became of it.
func (d *drill) cleanup() error {
	if !d.injected {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupFor)
	defer cancel()
	for {
		err := d.admin.clearFault(ctx, d.endpoint)
		if err == nil {
			d.report.Cleanup = fmt.Sprintf("the %s fault on %s was cleared (DELETE /v1/endpoints/%s/fault)", d.cfg.Mode, d.endpoint, d.endpoint)
			return nil
		}
		if d.gone && errors.Is(err, syscall.ECONNREFUSED) {
			// It refused connections for cleanupFor already: asking again
			// as long would only delay the verdict.
			d.report.Cleanup = fmt.Sprintf("the %s fault on %s was not cleared: the instance's admin API refuses connections (it stopped); a fault lives in the instance's memory and ends with it, or by itself at %s (its duration); if the instance is still running, clear it: DELETE /v1/endpoints/%s/fault",
				d.cfg.Mode, d.endpoint, d.injectedAt.Add(d.faultSpan()).Local().Format("15:04:05"), d.endpoint)
			return nil
		}
		select {
		case <-ctx.Done():
			d.report.Cleanup = fmt.Sprintf("the %s fault on %s may still be in place: clearing it failed for %s, the last time: %v; clear it: DELETE /v1/endpoints/%s/fault",
				d.cfg.Mode, d.endpoint, cleanupFor, err, d.endpoint)
			return errors.New("drill: " + d.report.Cleanup)
		case <-time.After(cleanupRetry):
		}
	}
}

// A fault left in place is asked to be cleared every cleanupRetry for
// cleanupFor.
const (
	cleanupFor   = 10 * time.Second
	cleanupRetry = 250 * time.Millisecond
)

// poll reads the status every pollEvery until cond holds or bound passes;
// it returns the last status read and whether cond held.
func (d *drill) poll(ctx context.Context, bound time.Duration, cond func(engine.Snapshot) bool) (engine.Snapshot, bool, error) {
	deadline := time.Now().Add(bound)
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		st, err := d.status(ctx)
		if err != nil {
			return st, false, err
		}
		if cond(st) {
			return st, true, nil
		}
		if time.Now().After(deadline) {
			return st, false, nil
		}
		select {
		case <-ctx.Done():
			return st, false, ctx.Err()
		case <-t.C:
		}
	}
}

const pollEvery = 20 * time.Millisecond

// since reads the events after seq.
func (d *drill) since(ctx context.Context, seq uint64) []engine.Event {
	evs, _ := d.admin.events(ctx, seq)
	return evs
}

func (d *drill) describeEvent(ev engine.Event) string {
	s := fmt.Sprintf("event #%d at +%s: %s", ev.Seq, ev.Time.Sub(d.injectedAt).Round(time.Millisecond), ev.Type)
	if ev.Endpoint != "" {
		s += " " + ev.Endpoint
	}
	if ev.From != "" || ev.To != "" {
		s += fmt.Sprintf(" %s→%s", ev.From, ev.To)
	}
	return s + ": " + ev.Message
}

// interruptedWords is what a step stopped by its context says: the bare
// "context canceled" of a wait cut short says nothing of the step.
func interruptedWords(summary string) string {
	if summary == context.Canceled.Error() {
		return "the drill was stopped before the step could judge"
	}
	return summary
}
