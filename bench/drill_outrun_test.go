package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// The cut-out step's outrun figure is the engine's own (outrun_unanswered),
// not every cancelled loser: a loser that answered late or lost to an
// attempt given more time is no evidence of a hang, and the engine does
// not count it. The drill counted 12 losers here where the engine counted
// 4, and failed the step ("only after 12 outrun attempts; the limit is 6").
func TestDrill_OutrunFigureIsTheEngines(t *testing.T) {
	inst := newStubInstance(t, healthyPair(), func(st *engine.Snapshot) {
		a := &st.Endpoints[0]
		a.Fault = &engine.FaultInfo{Mode: engine.FaultLatency, Latency: 2 * time.Second}
		a.Breaker = engine.BreakerSnapshot{State: engine.BreakerOpen, Cooldown: time.Second}
		a.Routable = false
		a.Accounting.Primary, a.Accounting.Losers, a.Accounting.OutrunUnanswered = 12, 12, 4
	})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var cut bench.DrillStep
	_, err := bench.Drill(ctx, bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL}, Mode: "latency", StepTimeout: 5 * time.Second},
		func(s bench.DrillStep) {
			if s.Name == bench.StepCutOut && s.State != bench.StepRunning {
				cut = s
				stop() // the rest is not this test's
			}
		})
	if cut.State != bench.StepPassed {
		t.Fatalf("cut-out step %+v (drill: %v)", cut, err)
	}
	if !strings.Contains(cut.Summary, "4 attempts outrun by hedges") {
		t.Errorf("summary %q: want the engine's 4 outrun attempts", cut.Summary)
	}
	if ev := strings.Join(cut.Evidence, "\n"); !strings.Contains(ev, "4 outrun by hedges unanswered (outrun_unanswered; 12 cancelled losers in all)") {
		t.Errorf("evidence %q", ev)
	}
}
