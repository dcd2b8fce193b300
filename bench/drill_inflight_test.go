package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// A request the faulted endpoint still held as the no-client-errors step
// looked (a write, which cannot fail over, sent to it before the cut) failed
// afterwards, at its deadline: the drill had already said "no client
// errors" and PASSED. It looks again as it ends, and revises the step,
// naming the request that failed.
func TestDrill_AClientErrorAfterTheNoClientErrorsStepFailsTheDrill(t *testing.T) {
	t.Parallel()
	var inst *stubInstance
	inst = newStubInstance(t, stubStatus(stubEndpoint("alpha", 20), stubEndpoint("beta", 40), stubEndpoint("gamma", 60)), func(st *engine.Snapshot) {
		a := &st.Endpoints[0]
		a.Fault = &engine.FaultInfo{Mode: engine.FaultTimeout}
		a.Breaker = engine.BreakerSnapshot{State: engine.BreakerOpen, Cooldown: time.Second}
		a.Routable = false
		a.InFlight = 1
		inst.answerer = "beta"
	})
	inst.onClear = func(st *engine.Snapshot) {
		st.Totals.ClientErrors++ // the held write, failed after the step looked
		inst.failed = []engine.RequestTrace{{ID: "42", Method: "eth_sendRawTransaction", Class: "write", Start: time.Now(),
			LatencyMS: 10000, Outcome: "error", ErrorCode: -32603, Attempts: []engine.AttemptTrace{{Endpoint: "alpha", Role: "primary", Outcome: "timeout"}}}}
		a := &st.Endpoints[0]
		a.Breaker, a.Routable, a.InFlight = engine.BreakerSnapshot{State: engine.BreakerClosed}, true, 0
		inst.answerer = "alpha"
		opened := time.Now().Add(-2 * time.Second)
		inst.events = []engine.Event{
			{Seq: 1, Time: opened, Type: engine.EventBreaker, Endpoint: "alpha", From: "closed", To: "open", Message: "3 failures"},
			{Seq: 2, Time: opened.Add(time.Second), Type: engine.EventBreaker, Endpoint: "alpha", From: "open", To: "half-open", Message: "cooldown elapsed"},
			{Seq: 3, Time: opened.Add(1200 * time.Millisecond), Type: engine.EventBreaker, Endpoint: "alpha", From: "half-open", To: "closed", Message: "3 trial successes in a row"},
		}
	}
	var log stepLog
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL},
		Mode: "timeout", Rate: 200, StepTimeout: 3 * time.Second}, log.add)
	logReport(t, rep)
	var step bench.DrillStep
	for _, s := range rep.Steps {
		if s.Name == bench.StepNoErrors {
			step = s
		}
	}
	if err == nil || rep.Passed || step.State != bench.StepFailed || !strings.Contains(err.Error(), "answered 1 client requests with its own error since the fault (every method, every client), 1 of them after this step had looked") {
		t.Fatalf("no-client-errors step %+v; drill error %v: want it failed on the held request's error", step, err)
	}
	// The failed request is named from the instance's traces: a count
	// alone left the operator to guess which request and endpoint failed.
	if !strings.Contains(err.Error(), "the latest: eth_sendRawTransaction (request 42) at +") ||
		!strings.Contains(err.Error(), "error -32603 after 10s, attempts: alpha timeout") {
		t.Errorf("drill error %v: want the failed request named", err)
	}
	if last := log.steps[len(log.steps)-1]; last.Name != bench.StepNoErrors || last.State != bench.StepFailed {
		t.Errorf("the last step report %+v: want the no-client-errors step revised", last)
	}
}
