package bench_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// Stopped 0.1 s into the serving step's wait for its first reads, the
// drill says what happened, not that a 15 s bound ran out.
func TestDrill_StoppedInServingSaysOnlyWhatHappened(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond})
	var n atomic.Int32
	release := make(chan struct{})
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 1 { // the second read: the step waits for 20
			stop()
			<-release
		}
		w.Header().Set(bench.HeaderEndpoint, "alpha")
		w.Write([]byte(`{"jsonrpc":"2.0","id":0,"result":"0x1"}`))
	}))
	defer target.Close()
	defer close(release)
	rep, err := bench.Drill(ctx, bench.DrillConfig{RPCURL: target.URL, Admin: bench.Admin{URL: eng.AdminURL}, Mode: "error", StepTimeout: time.Minute}, nil)
	logReport(t, rep)
	if rep == nil || !rep.Interrupted || len(rep.Steps) != 1 {
		t.Fatalf("report %+v, err %v", rep, err)
	}
	if s := rep.Steps[0].Summary; strings.Contains(s, "within") || !strings.HasPrefix(s, "interrupted, no verdict: ") {
		t.Errorf("summary %q: want only what happened (no 15s wait did)", s)
	}
}

// A --target where nothing listens: the drill says nothing answers there.
// It said "19 of them were answered while the instance … took 0 client
// requests" of reads all refused.
func TestDrill_DeadTargetSaysNothingAnswersThere(t *testing.T) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: dead, Admin: bench.Admin{URL: eng.AdminURL}, Mode: "error", StepTimeout: time.Minute}, nil)
	logReport(t, rep)
	if err == nil || !strings.Contains(err.Error(), "nothing answers there") || strings.Contains(err.Error(), "were answered") || rep.Failed != bench.StepServing {
		t.Fatalf("err %v: want the serving step to say nothing answers at %s", err, dead)
	}
}

// --no-load on an idle instance: no client traffic to judge the traffic
// and errors steps by, so no verdict (it said PASSED), a non-nil error,
// and the fault cleared.
func TestDrill_NoLoadOnAnIdleInstanceHasNoVerdict(t *testing.T) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond})
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{NoLoad: true, Admin: bench.Admin{URL: eng.AdminURL}, Mode: "error", StepTimeout: 30 * time.Second}, nil)
	text := logReport(t, rep)
	var de *bench.DrillError
	if !errors.As(err, &de) || !de.Interrupted || rep == nil || rep.Passed || rep.InterruptedStep != bench.StepMoved {
		t.Fatalf("err %v, report %+v: want no verdict at the traffic-moved step", err, rep)
	}
	want := `STOPPED during step "traffic moved"`
	if !strings.Contains(text, want) || !strings.Contains(text, "no verdict: the instance had no client traffic to judge") ||
		!strings.Contains(text, "(--no-load relies on its own traffic)") || strings.Contains(text, "PASSED") {
		t.Errorf("want %q and why", want)
	}
	if f := faultsOf(t, eng.AdminURL); len(f) > 0 {
		t.Errorf("faults %v left", f)
	}
}

// The instance went away mid-drill (stopped, not restarted): no verdict,
// as a restart, not FAILED at the step that was waiting; stdout's words
// and the error's agree.
func TestDrill_InstanceGoneIsNoVerdict(t *testing.T) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 1_000_000, BreakerCooldown: time.Second, ProbeInterval: 200 * time.Millisecond})
	u, err := url.Parse(eng.AdminURL)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(httputil.NewSingleHostReverseProxy(u))
	var once sync.Once
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: front.URL}, Mode: "timeout", StepTimeout: time.Minute},
		func(s bench.DrillStep) {
			if s.Name == bench.StepInject && s.State == bench.StepPassed {
				once.Do(front.Close) // its admin API refuses connections from now on
			}
		})
	text := logReport(t, rep)
	var de *bench.DrillError
	if !errors.As(err, &de) || !de.Interrupted || rep == nil || rep.Passed || rep.Failed != "" || rep.InterruptedStep != bench.StepCutOut {
		t.Fatalf("err %v, report %+v: want no verdict during the cut-out step", err, rep)
	}
	if want := `STOPPED during step "cut out"`; !strings.Contains(text, want) || !strings.Contains(text, "no verdict: the instance stopped answering its admin API") || strings.Contains(text, "FAILED") {
		t.Errorf("want %q, no verdict, the instance gone", want)
	}
	if !strings.Contains(err.Error(), `stopped during step "cut out"`) || strings.Contains(err.Error(), "interrupted") {
		t.Errorf("err %q: want it to say stopped, as the report does", err)
	}
	if strings.Contains(rep.Cleanup, "may still be in place") {
		t.Errorf("cleanup %q", rep.Cleanup)
	}
	adminDo(t, http.MethodDelete, eng.AdminURL+"/v1/endpoints/alpha/fault", "", nil)
}

// clientTraffic sends the instance reads of a client of its own, one at a
// time, until stop (at the latest as the test ends): a --no-load drill
// judges its traffic-moved and no-client-errors steps by such traffic, and
// has no verdict without it.
func clientTraffic(t *testing.T, rpcURL string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rpcURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// trafficFromCutOut is an onStep that starts clientTraffic once the
// cut-out step has passed (the serving step judges an idle instance, its
// best endpoint by the router's cost) and stops it as the clear starts.
func trafficFromCutOut(t *testing.T, rpcURL string, next func(bench.DrillStep)) func(bench.DrillStep) {
	var stop func()
	return func(s bench.DrillStep) {
		switch {
		case s.Name == bench.StepCutOut && s.State == bench.StepPassed:
			stop = clientTraffic(t, rpcURL)
		case s.Name == bench.StepClear && s.State == bench.StepRunning && stop != nil:
			stop()
		}
		if next != nil {
			next(s)
		}
	}
}
