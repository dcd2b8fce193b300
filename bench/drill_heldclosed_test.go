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
