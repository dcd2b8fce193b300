package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// stepLog collects the step reports a console would show live.
type stepLog struct {
	mu    sync.Mutex
	steps []bench.DrillStep
}

func (l *stepLog) add(s bench.DrillStep) {
	l.mu.Lock()
	l.steps = append(l.steps, s)
	l.mu.Unlock()
}

// The whole plan passes against the embedded engine, for every fault mode,
// and every step is reported as it starts and as it ends.
func TestDrill_PassesAgainstTheEmbeddedEngine(t *testing.T) {
	for _, mode := range bench.DrillModes {
		t.Run(mode, func(t *testing.T) {
			var log stepLog
			rep, err := bench.DrillEmbedded(context.Background(), bench.DrillConfig{Mode: mode, Seed: 1}, bench.EmbeddedDrill{}, startEngine, log.add)
			var text bytes.Buffer
			if rep != nil {
				rep.WriteText(&text)
			}
			t.Logf("\n%s", text.String())
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Passed || rep.Endpoint != "alpha" || len(rep.Steps) != len(bench.DrillSteps) {
				t.Fatalf("report %+v", rep)
			}
			if len(log.steps) != 2*len(bench.DrillSteps) {
				t.Fatalf("%d step reports, want a start and an end for each of %d steps", len(log.steps), len(bench.DrillSteps))
			}
			for i, name := range bench.DrillSteps {
				start, end := log.steps[2*i], log.steps[2*i+1]
				if start.Name != name || start.State != bench.StepRunning || end.Name != name || end.State != bench.StepPassed || end.Summary == "" {
					t.Errorf("step %d: %+v then %+v", i, start, end)
				}
				if name == bench.StepCutOut && strings.Contains(end.Summary, "after 0 ") {
					t.Errorf("the cut-out step names no attempt that cut the endpoint out: %s", end.Summary)
				}
			}
			if !strings.Contains(text.String(), "PASSED") {
				t.Errorf("text report:\n%s", text.String())
			}
		})
	}
}

// A breaker configured never to open fails the drill at the step that
// expects it to, with a message that says so, and the fault does not
// outlive the drill.
func TestDrill_FailsWhenTheBreakerNeverOpens(t *testing.T) {
	var cfgs []sim.Config
	for i, name := range []string{"alpha", "beta", "gamma"} {
		cfgs = append(cfgs, sim.Config{Name: name, Seed: int64(i + 1), Latency: sim.Latency{Median: time.Duration(20*(i+1)) * time.Millisecond, Sigma: 0.1}})
	}
	sims, err := sim.StartSet(cfgs, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.CloseAll(sims)
	spec := bench.EngineSpec{Hedging: true, BreakerFailures: 1_000_000, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond}
	for i, u := range sims {
		spec.Endpoints = append(spec.Endpoints, bench.EndpointSpec{Name: u.Name(), URL: u.URL(), Provider: fmt.Sprint(i)})
	}
	eng, err := startEngine(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()

	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: eng.AdminURL},
		Mode: "error", StepTimeout: 3 * time.Second}, nil)
	var de *bench.DrillError
	if !errors.As(err, &de) || de.Step != bench.StepCutOut || rep == nil || rep.Passed || rep.Failed != bench.StepCutOut {
		t.Fatalf("err %v, report %+v: want the cut-out step to fail", err, rep)
	}
	msg := err.Error()
	for _, want := range []string{`step "cut out" failed`, "alpha was not cut out within 3s", "breaker closed", "breaker.failures 1000000"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	last := rep.Steps[len(rep.Steps)-1]
	if last.State != bench.StepFailed || last.Name != bench.StepCutOut || len(rep.Steps) != 3 {
		t.Errorf("steps %+v", rep.Steps)
	}
	resp, err := http.Get(eng.AdminURL + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st engine.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	for _, ep := range st.Endpoints {
		if ep.Fault != nil {
			t.Errorf("%s still has a %s fault after the failed drill", ep.Name, ep.Fault.Mode)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestDrill_RefusesAnUnknownMode(t *testing.T) {
	if _, err := bench.Drill(context.Background(), bench.DrillConfig{Mode: "meteor"}, nil); err == nil || !strings.Contains(err.Error(), "meteor") {
		t.Fatalf("err %v", err)
	}
}
