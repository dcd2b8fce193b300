package bench_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// An admin API whose status answers come 300 ms late (a busy instance, a
// proxy): the cut-out step timed the cut by the status that showed it,
// "alpha cut out after 3 failed attempts (breaker open), 656ms after the
// fault", beside its own evidence "event #7 at +122ms: breaker alpha
// closed→open". The time it reports is the breaker's event's.
func TestDrill_CutOutIsTimedByTheBreakersEvent(t *testing.T) {
	eng := startDrillEngine(t, bench.EngineSpec{Hedging: true, BreakerFailures: 3, BreakerSuccesses: 1, BreakerCooldown: 500 * time.Millisecond, ProbeInterval: 200 * time.Millisecond})
	front := lateAdmin(t, eng.AdminURL, "/v1/status")

	var cut bench.DrillStep
	_, err := bench.Drill(context.Background(), bench.DrillConfig{RPCURL: eng.RPCURL, Admin: bench.Admin{URL: front.URL}, Mode: "error", StepTimeout: 10 * time.Second},
		func(s bench.DrillStep) {
			if s.Name == bench.StepCutOut && s.State != bench.StepRunning {
				cut = s
			}
		})
	if cut.State != bench.StepPassed {
		t.Fatalf("cut-out step %+v (drill: %v)", cut, err)
	}
	took := regexp.MustCompile(`, (\S+) after the fault$`).FindStringSubmatch(cut.Summary)
	var opened []string
	for _, ev := range cut.Evidence {
		if m := regexp.MustCompile(`at \+(\S+): breaker alpha closed→open`).FindStringSubmatch(ev); m != nil {
			opened = m
			break
		}
	}
	if took == nil || opened == nil || took[1] != opened[1] {
		t.Errorf("summary %q, evidence %q: want the cut timed by the breaker's opening", cut.Summary, cut.Evidence)
	}
}

// lateAdmin is a front for the admin API at adminURL that answers GETs of
// path 300 ms late, with what the API said when asked (a busy instance, a
// proxy), and everything else at once.
func lateAdmin(t *testing.T, adminURL, path string) *httptest.Server {
	target, err := url.Parse(adminURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	const late = 300 * time.Millisecond
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == path {
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r)
			select {
			case <-time.After(late):
			case <-r.Context().Done():
				return
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front
}
