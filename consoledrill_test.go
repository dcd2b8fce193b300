package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/internal/benchengine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
	"github.com/rpcdash/rpcdash/ui"
)

// drillEngine is an engine like the embedded drill's: three sims 20, 40
// and 60 ms apart, a one-second cooldown, probes every 200 ms.
func drillEngine(t *testing.T) bench.Engine {
	t.Helper()
	sims, endpoints, err := bench.StartDrillPool()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.CloseAll(sims) })
	spec := bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond,
		MaxHeadLag: 3, Endpoints: endpoints}
	eng, err := benchengine.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Stop() })
	return eng
}

type stepLog struct {
	mu    sync.Mutex
	steps []ui.DrillStep
}

func (l *stepLog) add(s ui.DrillStep) {
	l.mu.Lock()
	l.steps = append(l.steps, s)
	l.mu.Unlock()
}

func (l *stepLog) has(name, state string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.steps {
		if s.Name == name && s.State == state {
			return true
		}
	}
	return false
}

// The console's D runs bench's drill against the engine it shows: every
// step reported as it starts and ends, in the console's words, and its
// actions in the engine's events as the console's.
func TestConsoleDrill_RunsBenchsDrillAsTheConsole(t *testing.T) {
	eng := drillEngine(t)
	drills := newConsoleDrills()
	defer drills.stop()
	d := drills.drill(eng.AdminURL, eng.RPCURL, "")
	if len(d.Steps) != len(bench.DrillSteps) || d.Modes[0] != "error" || !strings.Contains(d.Load, eng.RPCURL) {
		t.Fatalf("drill %+v", d)
	}
	// The question's cut-out bound is the step's own, with its own reads
	// or (attached) without.
	if got, want := d.CutOut("timeout", 3), bench.DrillCutOutRule("timeout", 3, true); got != want {
		t.Fatalf("the console says the cut-out step checks %q, bench %q", got, want)
	}
	if got, want := drills.drill(eng.AdminURL, "", "").CutOut("error", 3), bench.DrillCutOutRule("error", 3, false); got != want {
		t.Fatalf("attached, the console says the cut-out step checks %q, bench %q", got, want)
	}
	var log stepLog
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Run(ctx, "error", log.add); err != nil {
		t.Fatalf("drill: %v", err)
	}
	for _, name := range bench.DrillSteps {
		if !log.has(name, ui.DrillRunning) || !log.has(name, ui.DrillPassed) {
			t.Errorf("step %q not reported running and passed: %+v", name, log.steps)
		}
	}
	var evs struct {
		Events []struct{ Type, Actor, Message string }
	}
	if err := json.Unmarshal([]byte(get(t, eng.AdminURL+"/v1/events")), &evs); err != nil {
		t.Fatal(err)
	}
	faults := 0
	for _, ev := range evs.Events {
		if ev.Type == "fault" && ev.Actor != "engine" {
			faults++
			if ev.Actor != "console" {
				t.Errorf("drill action by %q: %+v", ev.Actor, ev)
			}
		}
	}
	if faults != 2 { // injected, cleared
		t.Errorf("%d fault events by the drill, want 2: %+v", faults, evs.Events)
	}
}

// Leaving the console stops a running drill and waits until its fault is
// cleared.
func TestConsoleDrill_StopClearsTheFaultOfARunningDrill(t *testing.T) {
	eng := drillEngine(t)
	drills := newConsoleDrills()
	d := drills.drill(eng.AdminURL, eng.RPCURL, "")
	var log stepLog
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background(), "timeout", log.add) }()
	if !testutil.Poll(30*time.Second, func() bool { return log.has(bench.StepInject, ui.DrillPassed) }) {
		t.Fatalf("no fault injected: %+v", log.steps)
	}
	drills.stop()
	if err := <-done; err == nil {
		t.Fatal("a stopped drill reported success")
	}
	if st := get(t, eng.AdminURL+"/v1/status"); strings.Contains(st, `"fault"`) {
		t.Fatalf("the fault outlived the stopped drill:\n%s", st)
	}
}

// A failed drill's error reads after the console's "failover drill: "
// without a "drill: " of its own, and is still the drill's error.
func TestConsoleDrill_ErrorSaysDrillOnce(t *testing.T) {
	eng := drillEngine(t)
	drills := newConsoleDrills()
	defer drills.stop()
	d := drills.drill(eng.AdminURL, eng.RPCURL, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the first step stops at once: interrupted, not failed
	err := d.Run(ctx, "error", func(ui.DrillStep) {})
	var de *bench.DrillError
	if err == nil || strings.HasPrefix(err.Error(), "drill:") || !strings.HasPrefix(err.Error(), `interrupted during step "serving": `) || !errors.As(err, &de) {
		t.Fatalf("err %v", err)
	}
}

// Another drill holds the instance's lease (another operator's console,
// rpcdash drill): the console's drill does not run, and that is no
// verdict on failover. Measured on the binary with two consoles attached
// to one instance, the second's result read `FAILED after 0s: another
// drill is running against this instance …`, as it read `FAILED after 29s
// at step 7 readmitted` for a drill the instance's restart stopped
// (`stopped, no verdict: the instance restarted …`).
func TestConsoleDrill_RefusedLeaseIsNoVerdict(t *testing.T) {
	eng := drillEngine(t)
	req, err := http.NewRequest(http.MethodPost, eng.AdminURL+"/v1/drill", strings.NewReader(`{"holder": "another operator", "ttl": "1m"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("lease: HTTP %d", resp.StatusCode)
	}
	drills := newConsoleDrills()
	defer drills.stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = drills.drill(eng.AdminURL, "", "").Run(ctx, "error", func(ui.DrillStep) {})
	if err == nil || !errors.As(err, new(ui.NoVerdict)) || !strings.Contains(err.Error(), "another drill is running") {
		t.Fatalf("drill refused its lease: %v (%T), want a ui.NoVerdict", err, err)
	}
}

// A drill stopped by the instance's restart or by another drill taking
// its lease is no verdict either; a step that failed is one.
func TestConsoleDrillError_StoppedIsNoVerdictAFailedStepIsOne(t *testing.T) {
	stopped := consoleDrillError(&bench.DrillError{Step: "readmitted", Summary: "stopped, no verdict: the instance restarted", Interrupted: true})
	if !errors.As(stopped, new(ui.NoVerdict)) || strings.HasPrefix(stopped.Error(), "drill: ") {
		t.Errorf("stopped: %q (%T)", stopped, stopped)
	}
	failed := consoleDrillError(&bench.DrillError{Step: "cut out", Summary: "not cut out within 30s"})
	if errors.As(failed, new(ui.NoVerdict)) || !strings.HasPrefix(failed.Error(), `step "cut out" failed`) {
		t.Errorf("failed: %q (%T)", failed, failed)
	}
}

// Attached to an instance off loopback (a non-loopback address of this
// machine, with its admin token), D's drill is refused before anything
// is sent, in the console's words: it said `--admin http://192.0.2.2:26211:
// … (--allow-remote to override)`, flags the console has not.
func TestConsoleDrill_OffLoopbackIsRefusedInTheConsolesWords(t *testing.T) {
	drills := newConsoleDrills()
	defer drills.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := drills.drill("http://192.0.2.1:8546", "", "s3cret").Run(ctx, "error", func(ui.DrillStep) {})
	if err == nil || !errors.As(err, new(ui.NoVerdict)) || !strings.Contains(err.Error(), "the console runs the drill only against an instance on loopback") ||
		strings.Contains(err.Error(), "--allow-remote to override") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("off loopback: %v (%T)", err, err)
	}
}
