package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// faultsOf are the faults the instance's status shows, by endpoint.
func faultsOf(t *testing.T, adminURL string) map[string]string {
	t.Helper()
	var st engine.Snapshot
	adminDo(t, http.MethodGet, adminURL+"/v1/status", "", &st)
	out := map[string]string{}
	for _, ep := range st.Endpoints {
		if ep.Fault != nil {
			out[ep.Name] = string(ep.Fault.Mode)
		}
	}
	return out
}

// An admin API that errors on the first two DELETEs of the fault (a proxy
// in front of it, restarting): the drill fails (its breaker never opens),
// and the fault it injected is cleared all the same. It asked once and let
// the error go: the error fault stayed on alpha, every read sent to it
// failing, and the report did not say so.
func TestDrill_ClearsItsFaultThoughTheAdminAPIErrors(t *testing.T) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 1_000_000, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond})
	target, err := url.Parse(eng.AdminURL)
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/fault") && refused.Add(1) <= 2 {
			http.Error(w, `{"error": "restarting"}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()

	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: front.URL},
		Mode: "error", StepTimeout: time.Second}, nil)
	logReport(t, rep)
	if rep == nil || rep.Passed || rep.Failed != bench.StepCutOut || err == nil {
		t.Fatalf("err %v, report %+v: want the cut-out step to fail", err, rep)
	}
	if f := faultsOf(t, eng.AdminURL); len(f) > 0 || refused.Load() < 3 {
		t.Errorf("faults %v after %d DELETEs: want none left", f, refused.Load())
	}
	if !strings.Contains(rep.Cleanup, "error fault on alpha was cleared") {
		t.Errorf("cleanup %q: want it said that the fault was cleared", rep.Cleanup)
	}
}

// A drill stopped (Ctrl-C, SIGTERM) after its fault went in says it was
// interrupted, not that the step failed, and that its fault was cleared.
// It said `FAILED at step "cut out"`: `context canceled`, as if the
// breaker had not cut the endpoint out. The step has its own state,
// "interrupted", marked as the console marks it, and there is no failed
// step: it said "failed_step": "cut out" and "state": "failed" with [!!],
// which a script took for a failed step.
func TestDrill_InterruptedIsNoVerdict(t *testing.T) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 1_000_000, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	rep, err := bench.Drill(ctx, bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: eng.AdminURL}, Mode: "timeout", StepTimeout: time.Minute},
		func(s bench.DrillStep) {
			if s.Name == bench.StepInject && s.State == bench.StepPassed {
				stop() // as SIGINT does, while the cut-out step waits
			}
		})
	text := logReport(t, rep)
	var de *bench.DrillError
	if !errors.As(err, &de) || !de.Interrupted || de.Step != bench.StepCutOut || strings.Contains(err.Error(), "failed") {
		t.Errorf("err %v: want an interruption during the cut-out step", err)
	}
	if rep == nil || rep.Passed || !rep.Interrupted || !strings.Contains(text, `INTERRUPTED during step "cut out"`) || strings.Contains(text, "FAILED") {
		t.Fatalf("report %+v:\n%s", rep, text)
	}
	if f := faultsOf(t, eng.AdminURL); len(f) > 0 || !strings.Contains(rep.Cleanup, "timeout fault on alpha was cleared") {
		t.Errorf("faults %v, cleanup %q: want the fault cleared and said so", f, rep.Cleanup)
	}
	last := rep.Steps[len(rep.Steps)-1]
	if last.Name != bench.StepCutOut || last.State != bench.StepInterrupted || rep.Failed != "" || rep.InterruptedStep != bench.StepCutOut {
		t.Fatalf("last step %+v, failed %q, interrupted in %q: want the cut-out step interrupted, none failed", last, rep.Failed, rep.InterruptedStep)
	}
	if line := bench.StepLine(last); !strings.HasPrefix(line, "[■■] 3 cut out") || strings.Contains(text, "[!!]") {
		t.Errorf("step line %q: want it marked ■, not [!!]", line)
	}
	raw, _ := json.Marshal(rep)
	if strings.Contains(string(raw), `"failed_step"`) || !strings.Contains(string(raw), `"interrupted_step":"cut out"`) || !strings.Contains(string(raw), `"state":"interrupted"`) {
		t.Errorf("JSON %s", raw)
	}
}
