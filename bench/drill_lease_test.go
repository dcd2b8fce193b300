package bench_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// Two drills against one instance at once would inject faults into each
// other's measurements: the second is refused, naming the first, and
// sends nothing; the first runs on and passes, and lets the lease go at
// its end. Both ran before.
func TestDrill_ASecondDrillAtOnceIsRefused(t *testing.T) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: 500 * time.Millisecond,
		ProbeInterval: 100 * time.Millisecond, MaxHeadLag: 3})
	cfg := bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: eng.AdminURL}, Mode: "error", NoLoad: true}
	var second error
	var secondReport *bench.DrillReport
	rep, err := bench.Drill(context.Background(), cfg, trafficFromCutOut(t, eng.RPCURL, func(s bench.DrillStep) {
		if s.Name == bench.StepCutOut && s.State == bench.StepRunning { // the first one's fault is on
			secondReport, second = bench.Drill(context.Background(), cfg, nil)
		}
	}))
	logReport(t, rep)
	if err != nil {
		t.Fatalf("the first drill: %v", err)
	}
	if !errors.Is(second, bench.ErrDrillRunning) || secondReport != nil {
		t.Fatalf("the second drill: report %+v, err %v; want it refused", secondReport, second)
	}
	if msg := second.Error(); !strings.Contains(msg, "a drill is running: rpcdash drill (error fault, pid") {
		t.Errorf("refusal %q does not name the running drill", msg)
	}
	// Let go at the end: the next drill may take the lease.
	var lease engine.DrillLease
	adminDo(t, http.MethodPost, eng.AdminURL+"/v1/drill", `{"holder":"the next drill"}`, &lease)
}

// A drill killed outright (SIGKILL) can neither renew its lease nor let it
// go: the next one is refused while the lease runs, told that it expires
// by itself (engine: TestDrillLease_OneDrillAtATimeAndAKilledOnesExpires).
func TestDrill_RefusedWhileAKilledDrillsLeaseRuns(t *testing.T) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond})
	adminDo(t, http.MethodPost, eng.AdminURL+"/v1/drill", `{"holder":"rpcdash drill (latency fault, pid 4242 on box)","ttl":"1m"}`, nil)
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: eng.AdminURL}, Mode: "error"}, nil)
	if rep != nil || !errors.Is(err, bench.ErrDrillRunning) {
		t.Fatalf("report %+v, err %v: want a refusal", rep, err)
	}
	for _, want := range []string{"drill: another drill is running against this instance", "rpcdash drill (latency fault, pid 4242 on box)", "its lease expires by itself if that drill was killed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
}

// A drill killed outright cannot clear its fault: it left the endpoint
// faulted for good ("duration": "0s" in the status after a kill -9). The
// fault it injects ends by itself after the longest the drill keeps it
// on: the cut-out and traffic-moved waits, and 30 s.
func TestDrill_ItsFaultEndsByItselfIfTheDrillIsKilled(t *testing.T) {
	inst := newStubInstance(t, healthyPair(), func(st *engine.Snapshot) {
		st.Endpoints[0].Fault = &engine.FaultInfo{Mode: engine.FaultError}
		st.Endpoints[0].Breaker.State = engine.BreakerOpen
	})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	bench.Drill(ctx, bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL}, Mode: "error", Rate: 200, StepTimeout: 20 * time.Second},
		func(s bench.DrillStep) {
			if s.Name == bench.StepInject && s.State != bench.StepRunning {
				stop()
			}
		})
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if len(inst.faults) != 1 || inst.faults[0]["duration"] != "1m10s" {
		t.Fatalf("faults posted %v: want one lasting 2 × --step-timeout + 30s, 1m10s", inst.faults)
	}
}
