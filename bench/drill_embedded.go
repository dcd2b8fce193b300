package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// EmbeddedDrill are the thresholds of the engine an embedded drill starts;
// zero fields take DefaultEmbeddedDrill's.
type EmbeddedDrill struct {
	BreakerFailures  int
	BreakerSuccesses int
	BreakerCooldown  time.Duration
	ProbeInterval    time.Duration
}

// DefaultEmbeddedDrill: the engine's default failures and successes, a
// one-second cooldown and probes every 200 ms, so that a drill takes a few
// seconds.
var DefaultEmbeddedDrill = EmbeddedDrill{BreakerFailures: engine.Default().Breaker.Failures, BreakerSuccesses: engine.Default().Breaker.Successes,
	BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond}

// DrillEmbedded runs the drill against an engine of its own (hedging on,
// probes on) in front of three sims, alpha, beta and gamma, 20, 40 and
// 60 ms, so that the best endpoint is plain, with heads every 250 ms and a
// chain.max_head_lag of 3, so that a stale one is out within about a
// second (and a healthy one, probed every 200 ms, never looks behind).
func DrillEmbedded(ctx context.Context, cfg DrillConfig, e EmbeddedDrill, start EngineStarter, onStep func(DrillStep)) (*DrillReport, error) {
	if start == nil {
		return nil, errors.New("drill: no engine starter")
	}
	def := DefaultEmbeddedDrill
	if e.BreakerFailures <= 0 {
		e.BreakerFailures = def.BreakerFailures
	}
	if e.BreakerSuccesses <= 0 {
		e.BreakerSuccesses = def.BreakerSuccesses
	}
	if e.BreakerCooldown <= 0 {
		e.BreakerCooldown = def.BreakerCooldown
	}
	if e.ProbeInterval <= 0 {
		e.ProbeInterval = def.ProbeInterval
	}
	sims, endpoints, err := StartDrillPool()
	if err != nil {
		return nil, err
	}
	defer sim.CloseAll(sims)
	spec := EngineSpec{Hedging: true, BreakerFailures: e.BreakerFailures, BreakerSuccesses: e.BreakerSuccesses,
		BreakerCooldown: e.BreakerCooldown, ProbeInterval: e.ProbeInterval, MaxHeadLag: 3, Endpoints: endpoints}
	eng, err := start(spec)
	if err != nil {
		return nil, fmt.Errorf("drill: start engine: %w", err)
	}
	defer eng.Stop()
	cfg.RPCURL, cfg.Admin = eng.RPCURL, Admin{URL: eng.AdminURL}
	rep, err := Drill(ctx, cfg, onStep)
	if rep != nil {
		rep.Target = fmt.Sprintf("embedded engine over sims alpha, beta, gamma (20, 40, 60 ms); breaker.failures %d, breaker.successes %d, breaker.cooldown %s, probes every %s",
			e.BreakerFailures, e.BreakerSuccesses, e.BreakerCooldown, e.ProbeInterval)
	}
	return rep, err
}

// WriteText writes the report: one line per step with its time and what it
// found, the evidence under it, and the verdict.
func (r *DrillReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "drill: %s fault\ntarget: %s\n\n", r.Mode, r.Target)
	for _, s := range r.Steps {
		b.WriteString(StepLine(s) + "\n")
		for _, e := range s.Evidence {
			b.WriteString("      " + e + "\n")
		}
	}
	b.WriteString("\n" + r.Verdict() + "\n")
	if r.Cleanup != "" {
		b.WriteString("cleanup: " + r.Cleanup + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Verdict is the report's last word: passed, failed at a step, or
// interrupted during one.
func (r *DrillReport) Verdict() string {
	switch {
	case r.Passed:
		return fmt.Sprintf("PASSED in %s", r.Took.Round(time.Millisecond))
	case r.stopped:
		return fmt.Sprintf("STOPPED during step %q after %s: no verdict: %s", r.InterruptedStep, r.Took.Round(time.Millisecond), r.why)
	case r.Interrupted:
		return fmt.Sprintf("INTERRUPTED during step %q after %s: no verdict", r.InterruptedStep, r.Took.Round(time.Millisecond))
	}
	return fmt.Sprintf("FAILED at step %q after %s", r.Failed, r.Took.Round(time.Millisecond))
}

// StepLine is a step in one line, as the CLI prints it live: a running
// step with what it waits for (readmission says so), or an ended one.
func StepLine(s DrillStep) string {
	// ■: stopped in it, no verdict (the console's mark), not failed.
	mark := map[string]string{StepRunning: "..", StepPassed: "ok", StepFailed: "!!", StepInterrupted: "■■"}[s.State]
	if s.State == StepRunning {
		if s.Summary != "" {
			return fmt.Sprintf("[%s] %d %s: %s", mark, s.Index+1, s.Name, s.Summary)
		}
		return fmt.Sprintf("[%s] %d %s", mark, s.Index+1, s.Name)
	}
	return fmt.Sprintf("[%s] %d %s (%s): %s", mark, s.Index+1, s.Name, s.Took.Round(time.Millisecond), s.Summary)
}

// StartDrillPool starts the embedded drill's upstreams on loopback: sims
// alpha, beta and gamma (20, 40 and 60 ms, a block every 250 ms), each its
// own provider and region; close them with sim.CloseAll.
func StartDrillPool() ([]*sim.Upstream, []EndpointSpec, error) {
	var cfgs []sim.Config
	for i, name := range []string{"alpha", "beta", "gamma"} {
		cfgs = append(cfgs, sim.Config{Name: name, Seed: int64(i + 1), BlockTime: 250 * time.Millisecond,
			Latency: sim.Latency{Median: time.Duration(20*(i+1)) * time.Millisecond, Sigma: 0.1}})
	}
	sims, err := sim.StartSet(cfgs, "127.0.0.1")
	if err != nil {
		return nil, nil, err
	}
	var eps []EndpointSpec
	for i, u := range sims {
		eps = append(eps, EndpointSpec{Name: u.Name(), URL: u.URL(), Provider: fmt.Sprintf("provider-%d", i), Region: fmt.Sprintf("region-%d", i)})
	}
	return sims, eps, nil
}
