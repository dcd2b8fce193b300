package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// servingStep runs a drill against inst until its serving step ends, and
// returns that step.
func servingStep(t *testing.T, inst *stubInstance) bench.DrillStep {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var step bench.DrillStep
	bench.Drill(ctx, bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL}, Mode: "error", Seed: 1, Rate: 200},
		func(s bench.DrillStep) {
			if s.Name == bench.StepServing && s.State != bench.StepRunning {
				step = s
				stop() // the rest is not this test's
			}
		})
	return step
}

// Straight after a latency drill alpha's stats window still holds its 2 s
// answers: its p50 is the best but its tail factor makes it the dearest by
// the router's cost, and beta serves. The serving step judges as the router
// decides, by its cost: it failed "beta serves, but alpha is better: p50
// 40.0 ms against 20.0 ms" although the router was right.
func TestDrillServing_JudgesByTheRoutersCostNotByP50(t *testing.T) {
	alpha := stubEndpoint("alpha", 20)
	alpha.Latency.P99 = 2048 * time.Millisecond
	alpha.Score.TailFactor, alpha.Score.Cost = 5, 100*time.Millisecond
	inst := newStubInstance(t, stubStatus(alpha, stubEndpoint("beta", 40), stubEndpoint("gamma", 60)), nil)
	inst.answerer = "beta"

	step := servingStep(t, inst)
	if step.State != bench.StepPassed {
		t.Fatalf("serving step %+v", step)
	}
	if !strings.HasPrefix(step.Summary, "beta serves and is the best healthy endpoint by the router's cost (eth_blockNumber 40.0 ms, eth_getBalance 40.0 ms; 3 routable)") {
		t.Errorf("summary %q", step.Summary)
	}
	if ev := strings.Join(step.Evidence, "\n"); !strings.Contains(ev, "alpha: routable, breaker closed, routing cost 100.0 ms (latency 20.0 ms (endpoint) × error 1.00 × tail 5.00), p50 20.0 ms, p99 2048.0 ms") {
		t.Errorf("evidence %q", ev)
	}
}

// When the reads go to an endpoint the router's own cost says is worse
// beyond router.tolerance, the step fails, giving the figures it judged
// by: each endpoint's cost and its parts.
func TestDrillServing_FailsWithTheCostsItJudgedBy(t *testing.T) {
	bench.SetServingBound(t, 2*time.Second) // at 200 reads a second, 20 take 0.1 s
	beta := stubEndpoint("beta", 40)
	beta.Score.LoadFactor, beta.Score.Cost = 2, 80*time.Millisecond // a read in flight: no part of its standing
	gamma := stubEndpoint("gamma", 60)
	gamma.Methods = map[string]engine.MethodSnapshot{"eth_getBalance": {Score: engine.ScoreParts{Latency: 62 * time.Millisecond,
		LatencySource: "method", ErrorFactor: 1, TailFactor: 1, LoadFactor: 1, Cost: 62 * time.Millisecond}}}
	inst := newStubInstance(t, stubStatus(beta, gamma), nil)
	inst.answerer = "gamma"

	step := servingStep(t, inst)
	if step.State != bench.StepFailed {
		t.Fatalf("serving step %+v", step)
	}
	want := "gamma serves eth_blockNumber, but beta is better by the router's cost: cost 60.0 ms (latency 60.0 ms (endpoint) × error 1.00 × tail 1.00) against cost 40.0 ms (latency 40.0 ms (endpoint) × error 1.00 × tail 1.00), beyond router.tolerance 0.25"
	if !strings.Contains(step.Summary, want) {
		t.Errorf("summary %q lacks %q", step.Summary, want)
	}
}
