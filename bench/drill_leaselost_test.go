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
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// leaseWatch is an admin API in front of an engine's that tells the test
// the drill's lease id (from its renewals) and the answers to its POSTs
// of the lease.
type leaseWatch struct {
	URL   string
	ids   chan string // each renewal's lease id
	posts chan int    // each POST /v1/drill's status code
}

func watchLease(t *testing.T, adminURL string) *leaseWatch {
	t.Helper()
	u, _ := url.Parse(adminURL)
	w := &leaseWatch{ids: make(chan string, 1000), posts: make(chan int, 100)}
	p := httputil.NewSingleHostReverseProxy(u)
	p.ModifyResponse = func(r *http.Response) error {
		switch req := r.Request; {
		case req.Method == http.MethodPut && strings.HasPrefix(req.URL.Path, "/v1/drill/"):
			select {
			case w.ids <- strings.TrimPrefix(req.URL.Path, "/v1/drill/"):
			default:
			}
		case req.Method == http.MethodPost && req.URL.Path == "/v1/drill":
			w.posts <- r.StatusCode
		}
		return nil
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	return w
}

// nextPost waits for the drill's next POST of the lease and returns its
// status code.
func (w *leaseWatch) nextPost(t *testing.T) int {
	t.Helper()
	select {
	case c := <-w.posts:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("the drill did not ask for its lease again")
		return 0
	}
}

// A lease lost mid-drill (the instance restarted, or it expired) was
// never taken again: the renewals failed on, and a second drill could
// start while the first one's fault was on. Lost while free, the drill
// takes it again and says so.
func TestDrill_ALeaseLostWhileFreeIsTakenAgainAndSaid(t *testing.T) {
	bench.SetLeaseRenew(t, 50*time.Millisecond)
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: 500 * time.Millisecond,
		ProbeInterval: 100 * time.Millisecond, MaxHeadLag: 3})
	watch := watchLease(t, eng.AdminURL)
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: watch.URL}, Mode: "error"},
		func(s bench.DrillStep) {
			if s.Name != bench.StepMoved || s.State != bench.StepRunning {
				return
			}
			if c := watch.nextPost(t); c != http.StatusOK { // the drill's own, at its start
				t.Errorf("the lease taken: HTTP %d", c)
			}
			// The instance forgets it, as a restart does.
			adminDo(t, http.MethodDelete, eng.AdminURL+"/v1/drill/"+<-watch.ids, "", nil)
			if c := watch.nextPost(t); c != http.StatusOK {
				t.Errorf("the lease taken again: HTTP %d", c)
			}
		})
	text := logReport(t, rep)
	if err != nil {
		t.Fatalf("the drill: %v", err)
	}
	if !strings.Contains(text, "the drill lease was lost at +") || !strings.Contains(text, "and taken again: no other drill held it") {
		t.Errorf("the report does not say the lease was lost and taken again")
	}
	var d engine.RunningDrill
	adminDo(t, http.MethodGet, eng.AdminURL+"/v1/drill", "", &d)
	if d.Running {
		t.Errorf("the lease taken again was not let go at the end: %+v", d)
	}
}

// Lost and taken by another drill, the two would inject faults into each
// other's measurements: the drill stops, no verdict, says whose drill
// took it, and clears its fault; the other's lease stays. It ran on to
// PASSED before.
func TestDrill_ALeaseTakenByAnotherDrillStopsItCleanly(t *testing.T) {
	bench.SetLeaseRenew(t, 50*time.Millisecond)
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: 500 * time.Millisecond,
		ProbeInterval: 100 * time.Millisecond, MaxHeadLag: 3})
	watch := watchLease(t, eng.AdminURL)
	const other = "the console's drill (latency fault, pid 9 on box)"
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: watch.URL}, Mode: "error"},
		func(s bench.DrillStep) {
			if s.Name != bench.StepMoved || s.State != bench.StepRunning {
				return
			}
			watch.nextPost(t) // the drill's own, at its start
			// Its lease expired and another drill took it.
			adminDo(t, http.MethodDelete, eng.AdminURL+"/v1/drill/"+<-watch.ids, "", nil)
			adminDo(t, http.MethodPost, eng.AdminURL+"/v1/drill", `{"holder":"`+other+`","ttl":"1m"}`, nil)
			if c := watch.nextPost(t); c != http.StatusConflict {
				t.Errorf("the drill asked for its lease again: HTTP %d, want 409", c)
			}
		})
	text := logReport(t, rep)
	var de *bench.DrillError
	if !errors.As(err, &de) || !de.Interrupted || rep == nil || !rep.Interrupted || rep.Passed {
		t.Fatalf("err %v, report %+v: want the drill stopped, no verdict", err, rep)
	}
	last := rep.Steps[len(rep.Steps)-1].Summary
	if !strings.HasPrefix(last, "stopped, no verdict: the drill lease was lost at +") || !strings.Contains(last, other) {
		t.Errorf("the step's summary %q does not say the drill stopped for another's lease", last)
	}
	if !strings.Contains(text, "STOPPED during step") || !strings.Contains(rep.Cleanup, "was cleared") {
		t.Errorf("verdict or cleanup:\n%s", text)
	}
	var st engine.Snapshot
	adminDo(t, http.MethodGet, eng.AdminURL+"/v1/status", "", &st)
	for _, ep := range st.Endpoints {
		if ep.Fault != nil {
			t.Errorf("%s keeps a fault: %+v", ep.Name, ep.Fault)
		}
	}
	var d engine.RunningDrill
	adminDo(t, http.MethodGet, eng.AdminURL+"/v1/drill", "", &d)
	if !d.Running || d.Holder != other {
		t.Errorf("the other drill's lease: %+v", d)
	}
}

// switchable is a proxy to one instance's port, then another's: a restart
// behind the same address.
type switchable struct {
	URL    string
	target atomic.Pointer[url.URL]
}

func newSwitchable(t *testing.T, to string) *switchable {
	s := &switchable{}
	s.to(to)
	srv := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(s.target.Load())
		r.Out.Host = r.In.Host
	}})
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *switchable) to(u string) {
	p, _ := url.Parse(u)
	s.target.Store(p)
}

// An instance restarted mid-drill has forgotten the fault and the state
// the drill measures: the drill went on against the new one and failed
// "traffic moved" (the reads went back to alpha, never faulted there), a
// verdict on failover the restart made up. It stops, no verdict, saying
// the instance restarted.
func TestDrill_AnInstanceRestartedMidDrillStopsItWithNoVerdict(t *testing.T) {
	spec := bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: 500 * time.Millisecond,
		ProbeInterval: 100 * time.Millisecond, MaxHeadLag: 3}
	first := startDrillEngine(t, spec)
	admin, rpc := newSwitchable(t, first.AdminURL), newSwitchable(t, first.RPCURL)
	var second bench.Engine
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: rpc.URL, Admin: bench.Admin{URL: admin.URL}, Mode: "error"},
		func(s bench.DrillStep) {
			if s.Name == bench.StepMoved && s.State == bench.StepRunning {
				second = startDrillEngine(t, spec) // started after the first: another started time
				admin.to(second.AdminURL)
				rpc.to(second.RPCURL)
			}
		})
	logReport(t, rep)
	var de *bench.DrillError
	if !errors.As(err, &de) || !de.Interrupted || rep == nil || !rep.Interrupted || rep.InterruptedStep != bench.StepMoved {
		t.Fatalf("err %v, report %+v: want the drill stopped in %q, no verdict", err, rep, bench.StepMoved)
	}
	if last := rep.Steps[len(rep.Steps)-1].Summary; !strings.HasPrefix(last, "stopped, no verdict: the instance restarted at ") {
		t.Errorf("the step's summary %q does not say the instance restarted", last)
	}
	var d engine.RunningDrill
	adminDo(t, http.MethodGet, second.AdminURL+"/v1/drill", "", &d)
	if d.Running {
		t.Errorf("a lease left on the restarted instance: %+v", d)
	}
}

// portServer serves a handler on one loopback port that it can close (the
// port then refuses connections) and open again: a restarting instance's
// admin port.
type portServer struct {
	addr string
	srv  *http.Server
}

func servePort(t *testing.T, h http.Handler) *portServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &portServer{addr: ln.Addr().String()}
	p.serve(ln, h)
	t.Cleanup(func() { p.srv.Close() })
	return p
}

func (p *portServer) serve(ln net.Listener, h http.Handler) {
	p.srv = &http.Server{Handler: h}
	go p.srv.Serve(ln)
}

// reopen serves h on the same port again.
func (p *portServer) reopen(t *testing.T, h http.Handler) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Error(err)
		return
	}
	p.serve(ln, h)
}

func proxyTo(u string) http.Handler {
	target, _ := url.Parse(u)
	return httputil.NewSingleHostReverseProxy(target)
}

// A restart leaves a gap while the instance's ports are closed: the step
// under way failed at once on "connection refused" (FAILED at step "cut
// out"). The drill asks again through the gap and, finding the instance
// restarted, stops with no verdict.
func TestDrill_ARestartsGapIsWaitedThroughAndStopsTheDrill(t *testing.T) {
	spec := bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: 500 * time.Millisecond,
		ProbeInterval: 100 * time.Millisecond, MaxHeadLag: 3}
	first := startDrillEngine(t, spec)
	second := startDrillEngine(t, spec) // started after the first
	admin := servePort(t, proxyTo(first.AdminURL))
	rpc := newSwitchable(t, first.RPCURL)
	done := make(chan struct{})
	rep, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: rpc.URL, Admin: bench.Admin{URL: "http://" + admin.addr}, Mode: "error"},
		func(s bench.DrillStep) {
			if s.Name == bench.StepCutOut && s.State == bench.StepRunning {
				admin.srv.Close() // the port refuses connections
				rpc.to(second.RPCURL)
				go func() { // back up, restarted, while the step asks
					defer close(done)
					time.Sleep(300 * time.Millisecond)
					admin.reopen(t, proxyTo(second.AdminURL))
				}()
			}
		})
	<-done
	logReport(t, rep)
	var de *bench.DrillError
	if !errors.As(err, &de) || !de.Interrupted || rep == nil || !rep.Interrupted || rep.InterruptedStep != bench.StepCutOut {
		t.Fatalf("err %v, report %+v: want the drill stopped in %q, no verdict", err, rep, bench.StepCutOut)
	}
	if last := rep.Steps[len(rep.Steps)-1].Summary; !strings.HasPrefix(last, "stopped, no verdict: the instance restarted at ") {
		t.Errorf("the step's summary %q does not say the instance restarted", last)
	}
}
