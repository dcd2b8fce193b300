package bench_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// A latency fault on an endpoint whose stats window already holds slow
// answers (an earlier latency drill's) opens no breaker: its deadlines are
// learnt from those answers, its probes' 2 s answers are answers, and it is
// slow, not hung. The router ranks it behind the others by its cost, and
// reads go elsewhere. The drill failed "alpha was not cut out within 30s:
// 10 attempts sent to it since the fault, 0 failed; breaker closed" (rpcdash
// serve over sims, a second latency drill) though no client saw an error;
// it takes that ranking as the cut, says so, and readmission does not look
// for a breaker that never opened.
func TestDrill_ALatencyFaultRankedBehindTheOthersIsCutOut(t *testing.T) {
	alpha := stubEndpoint("alpha", 20)
	var inst *stubInstance
	inst = newStubInstance(t, stubStatus(alpha, stubEndpoint("beta", 40), stubEndpoint("gamma", 60)), func(st *engine.Snapshot) {
		a := &st.Endpoints[0]
		a.Fault = &engine.FaultInfo{Mode: engine.FaultLatency, Latency: 2 * time.Second}
		// Its last answers are 2 s late: the router's latency figure says so.
		a.Score.Latency, a.Score.TailFactor, a.Score.Cost = 2000*time.Millisecond, 2, 4000*time.Millisecond
		inst.answerer = "beta"
	})
	inst.onClear = func(*engine.Snapshot) { inst.answerer = "alpha" } // explored, it answers first again
	var log stepLog
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL},
		Mode: "latency", Rate: 200, StepTimeout: 5 * time.Second}, log.add)
	logReport(t, rep)
	if err != nil {
		t.Fatal(err)
	}
	cut := rep.Steps[2]
	if !strings.Contains(cut.Summary, "ranked behind the others by the router's cost, its breaker closed: slow, not hung") {
		t.Errorf("cut out: %q", cut.Summary)
	}
	if ev := strings.Join(cut.Evidence, "\n"); !strings.Contains(ev, "eth_getBalance: alpha cost 4000.0 ms (latency 2000.0 ms (endpoint) × error 1.00 × tail 2.00), 20.0 ms before the fault, against beta's cost 40.0 ms") {
		t.Errorf("cut-out evidence %q", ev)
	}
	if sum := rep.Steps[len(rep.Steps)-1].Summary; !strings.Contains(sum, "its breaker never opened: it was ranked behind the others, and the router sends it reads again") {
		t.Errorf("readmitted: %q", sum)
	}
}

// Ranked behind the others first, the endpoint's breaker may still open
// afterwards (the hang rule, a probe's deadline): readmission then follows
// the breaker's way back, and does not say it never opened.
func TestDrill_ALatencyFaultsBreakerOpeningAfterTheRankingIsFollowed(t *testing.T) {
	var inst *stubInstance
	inst = newStubInstance(t, stubStatus(stubEndpoint("alpha", 20), stubEndpoint("beta", 40), stubEndpoint("gamma", 60)), func(st *engine.Snapshot) {
		a := &st.Endpoints[0]
		a.Fault = &engine.FaultInfo{Mode: engine.FaultLatency, Latency: 2 * time.Second}
		a.Score.Latency, a.Score.Cost = 2000*time.Millisecond, 2000*time.Millisecond
		inst.answerer = "beta"
	})
	inst.onClear = func(*engine.Snapshot) {
		inst.answerer = "alpha"
		opened := time.Now().Add(-2 * time.Second)
		inst.events = []engine.Event{
			{Seq: 1, Time: opened, Type: engine.EventBreaker, Endpoint: "alpha", From: "closed", To: "open", Message: "6 attempts in a row outrun by hedges"},
			{Seq: 2, Time: opened.Add(time.Second), Type: engine.EventBreaker, Endpoint: "alpha", From: "open", To: "half-open", Message: "cooldown elapsed"},
			{Seq: 3, Time: opened.Add(1200 * time.Millisecond), Type: engine.EventBreaker, Endpoint: "alpha", From: "half-open", To: "closed", Message: "3 trial successes in a row"},
		}
	}
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL},
		Mode: "latency", Rate: 200, StepTimeout: 5 * time.Second}, nil)
	logReport(t, rep)
	if err != nil {
		t.Fatal(err)
	}
	if sum := rep.Steps[len(rep.Steps)-1].Summary; !strings.Contains(sum, "(open 1s, then half-open for 200ms until 3 trial successes closed it)") {
		t.Errorf("readmitted: %q", sum)
	}
}

// A ranking the fault did not cause is no cut. On a busy machine the
// embedded drill's 20 ms alpha was seen at a cost of 58.4 ms before the
// latency fault and still at 58.4 ms 111 ms after it, with no attempt or
// probe answered since; beta's cost fell from 47.4 to 44.0 ms, which put
// alpha beyond router.tolerance, and the drill passed the cut-out step
// "after 0 client attempts sent to it". Alpha's own cost, unchanged since
// the fault, would rank it behind as much: nothing from the fault cut it
// out, and the step waits for evidence that does (here none comes).
func TestDrill_ARankingTheFaultDidNotCauseIsNoCut(t *testing.T) {
	inst := newStubInstance(t, stubStatus(stubEndpoint("alpha", 58.4), stubEndpoint("beta", 47.4), stubEndpoint("gamma", 68.6)), func(st *engine.Snapshot) {
		st.Endpoints[0].Fault = &engine.FaultInfo{Mode: engine.FaultLatency, Latency: 2 * time.Second}
		b := &st.Endpoints[1]
		b.Score.Latency, b.Score.Cost = 44*time.Millisecond, 44*time.Millisecond
	})
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL},
		Mode: "latency", Rate: 200, StepTimeout: time.Second}, nil)
	logReport(t, rep)
	var de *bench.DrillError
	if !errors.As(err, &de) || de.Step != bench.StepCutOut || rep == nil || rep.Passed {
		t.Fatalf("err %v: want the cut-out step to fail, alpha's cost unchanged since the fault", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "alpha was not cut out within 1s") {
		t.Errorf("message %q", msg)
	}
}

// The fault raising the endpoint's cost is the cut, though another's fell
// meanwhile so far that its cost from before the fault would not tie now.
func TestDrill_ARankingTheFaultCausedIsACutThoughTheOthersGotFaster(t *testing.T) {
	inst := newStubInstance(t, stubStatus(stubEndpoint("alpha", 58.4), stubEndpoint("beta", 47.4), stubEndpoint("gamma", 68.6)), func(st *engine.Snapshot) {
		a := &st.Endpoints[0]
		a.Fault = &engine.FaultInfo{Mode: engine.FaultLatency, Latency: 2 * time.Second}
		a.Score.Latency, a.Score.Cost = 2000*time.Millisecond, 2000*time.Millisecond
		b := &st.Endpoints[1]
		b.Score.Latency, b.Score.Cost = 44*time.Millisecond, 44*time.Millisecond
	})
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: inst.rpc.URL, Admin: bench.Admin{URL: inst.admin.URL},
		Mode: "latency", Rate: 200, StepTimeout: 5 * time.Second}, nil)
	logReport(t, rep)
	if rep == nil || len(rep.Steps) < 3 || rep.Steps[2].State != bench.StepPassed {
		t.Fatalf("err %v: want the cut-out step passed, alpha's cost risen from 58.4 to 2000 ms", err)
	}
	if ev := strings.Join(rep.Steps[2].Evidence, "\n"); !strings.Contains(ev, "alpha cost 2000.0 ms (latency 2000.0 ms (endpoint) × error 1.00 × tail 1.00), 58.4 ms before the fault, against beta's cost 44.0 ms") {
		t.Errorf("cut-out evidence %q", ev)
	}
}
