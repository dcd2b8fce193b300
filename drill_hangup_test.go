package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/internal/benchengine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
	"github.com/rpcdash/rpcdash/themes"
	"github.com/rpcdash/rpcdash/ui"
)

// stuckDrillEngine is drillEngine whose breakers never open: a drill's
// cut-out step waits (30 s) with its fault in force, so a test can stop
// it there.
func stuckDrillEngine(t *testing.T) bench.Engine {
	t.Helper()
	sims, endpoints, err := bench.StartDrillPool()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.CloseAll(sims) })
	eng, err := benchengine.Start(bench.EngineSpec{Hedging: true, BreakerFailures: 1_000_000, BreakerSuccesses: 3, BreakerCooldown: time.Second,
		ProbeInterval: 200 * time.Millisecond, MaxHeadLag: 3, Endpoints: endpoints})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Stop() })
	return eng
}

// drillLeft says what a drill left at the instance: its faults and
// whether a drill's lease is still in force.
func drillLeft(t *testing.T, adminURL string) (faults []string, leased bool) {
	t.Helper()
	var st struct {
		Endpoints []struct {
			Name  string
			Fault *struct{ Mode string }
		}
	}
	if err := json.Unmarshal([]byte(get(t, adminURL+"/v1/status")), &st); err != nil {
		t.Fatal(err)
	}
	for _, ep := range st.Endpoints {
		if ep.Fault != nil {
			faults = append(faults, ep.Name+" "+ep.Fault.Mode)
		}
	}
	var d struct{ Running bool }
	if err := json.Unmarshal([]byte(get(t, adminURL+"/v1/drill")), &d); err != nil {
		t.Fatal(err)
	}
	return faults, d.Running
}

// `rpcdash drill … & kill -HUP $!` (its terminal closed): the drill clears
// its fault and lets its lease go, as on SIGINT, and says it was
// interrupted. SIGHUP's default killed it outright (exit 129), the fault
// left in force for its 1m30s.
func TestDrill_SIGHUPClearsItsFaultAndLease(t *testing.T) {
	eng := stuckDrillEngine(t)
	p := testutil.Start(t, exec.Command(testutil.Binary(t, false), "drill", "--admin", eng.AdminURL, "--target", eng.RPCURL))
	p.Line(t, regexp.MustCompile(`^\[ok\] 2 inject`))
	p.Signal(t, syscall.SIGHUP)
	code := p.Wait(t, 20*time.Second)
	if faults, leased := drillLeft(t, eng.AdminURL); len(faults) > 0 || leased {
		t.Fatalf("after SIGHUP (exit %d): faults %v, lease in force %v\n%s%s", code, faults, leased, p.Stdout(), p.Stderr())
	}
	if code != 1 || !strings.Contains(p.Stdout(), `INTERRUPTED during step "cut out"`) || !strings.Contains(p.Stdout(), "cleanup: the error fault on alpha was cleared") {
		t.Errorf("exit %d, stdout:\n%s", code, p.Stdout())
	}
}

// The console's terminal gone (its input ends: the terminal closed, its
// tmux session killed) ends the console as SIGTERM does, and the drill it
// runs clears its fault and lets its lease go. Bubble Tea only stopped
// reading at EOF: the console ran on, its drill's fault in force.
func TestConsole_EndOfInputEndsItAndClearsItsDrillsFault(t *testing.T) {
	eng := stuckDrillEngine(t)
	remote, err := ui.NewRemote(eng.AdminURL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	drills := newConsoleDrills()
	defer drills.stop()
	opts := ui.Options{Backend: remote, Refresh: 100 * time.Millisecond, Source: ui.Source{Attached: remote.URL()},
		Drill: drills.drill(eng.AdminURL, eng.RPCURL, "")}
	m, _ := consoleModel(opts, themes.Default()).Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	in, keys, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var screen testutil.SyncBuffer
	done := make(chan error, 1)
	go func() { done <- runProgram(context.Background(), m, in, &screen) }()
	// D waits for the pool on screen; one key a write: runes read
	// together are one key message.
	if !testutil.Poll(10*time.Second, func() bool { return strings.Contains(screen.String(), "gamma") }) {
		t.Fatal("the console showed no pool")
	}
	if _, err := keys.Write([]byte("D")); err != nil {
		t.Fatal(err)
	}
	if !testutil.Poll(10*time.Second, func() bool { return strings.Contains(screen.String(), "Failover drill") }) {
		t.Fatalf("D asked nothing:\n%q", screen.String()[max(0, len(screen.String())-3000):])
	}
	if _, err := keys.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if !testutil.Poll(30*time.Second, func() bool { f, _ := drillLeft(t, eng.AdminURL); return len(f) > 0 }) {
		t.Fatal("the console's drill injected no fault")
	}
	keys.Close() // the terminal is gone
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("console: %v", err)
		}
	case <-time.After(10 * time.Second):
		drills.stop() // its fault is cleared all the same, for the next test
		t.Fatal("the console ran on after its input ended")
	}
	drills.stop() // as cmdConsole does once the program has ended
	if faults, leased := drillLeft(t, eng.AdminURL); len(faults) > 0 || leased {
		t.Fatalf("faults %v, lease in force %v after the console ended", faults, leased)
	}
}
