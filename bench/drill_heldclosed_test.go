package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// With one endpoint of three already out of routing, breaker.max_open_share
// (0.5) holds the faulted one's breaker closed however often it fails: the
// drill said only "beta was not cut out within 30s: 96 attempts sent to it
// since the fault, 155 failed; breaker closed (155 consecutive failures,
// breaker.failures 3)", which reads as a broken breaker. It says why.
func TestDrill_ABreakerHeldClosedByTheOpenShareIsSaid(t *testing.T) {
	alpha := stubEndpoint("alpha", 20)
	alpha.Routable, alpha.Breaker.State = false, engine.BreakerOpen
	inst := newStubInstance(t, stubStatus(alpha, stubEndpoint("beta", 40), stubEndpoint("gamma", 60)), nil)
	inst.answerer = "beta"
	inst.onInjectAt = "beta"
	inst.onInject = func(st *engine.Snapshot) {
		b := &st.Endpoints[1]
		b.Fault = &engine.FaultInfo{Mode: engine.FaultError}
		b.Breaker = engine.BreakerSnapshot{State: engine.BreakerClosed, ConsecutiveFailures: 155, HeldClosed: true}
	}
	_, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL}, Mode: "error", Rate: 200, StepTimeout: 300 * time.Millisecond}, nil)
	if err == nil || !strings.Contains(err.Error(), "its breaker is held closed by breaker.max_open_share: with 1 of the 3 endpoints already out of routing, no more breakers may open") {
		t.Fatalf("err %v", err)
	}
}

// A fault already in force (here one a killed drill left to run out) is
// said at once, at the serving step, rather than measured beside the
// drill's own: the next drill faulted beta, whose breaker the open share
// then held closed, and failed its cut-out after 30 s.
func TestDrill_RefusesToStartBesideAFaultInForce(t *testing.T) {
	alpha := stubEndpoint("alpha", 20)
	since := time.Date(2026, 12, 4, 3, 11, 49, 0, time.Local)
	alpha.Fault = &engine.FaultInfo{Mode: engine.FaultTimeout, Since: since, Expires: since.Add(90 * time.Second)}
	alpha.Routable, alpha.Breaker.State = false, engine.BreakerOpen
	inst := newStubInstance(t, stubStatus(alpha, stubEndpoint("beta", 40), stubEndpoint("gamma", 60)), nil)
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL}, Mode: "error", Rate: 200}, nil)
	want := "alpha has a timeout fault in force (since 03:11:49, ends by itself at 03:13:19): a drill now would measure it beside its own; clear it (DELETE /v1/endpoints/alpha/fault) or wait for it to end"
	if err == nil || !strings.Contains(err.Error(), want) || rep == nil || rep.Failed != bench.StepServing {
		t.Fatalf("report %+v, err %v: want the serving step to fail with %q", rep, err, want)
	}
	if rep.Steps[0].Took > 5*time.Second {
		t.Errorf("it waited %s for a fault to go", rep.Steps[0].Took)
	}
}
