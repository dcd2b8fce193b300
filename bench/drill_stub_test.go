package bench_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// stubInstance is an admin API and an RPC port that say what a test sets:
// the status it serves is st (counting the reads in its Totals.Requests),
// and every read is answered by "alpha".
type stubInstance struct {
	mu         sync.Mutex
	answerer   string // who answers the reads ("alpha" unless set)
	st         engine.Snapshot
	onInject   func(*engine.Snapshot)
	onInjectAt string                 // the endpoint the fault is expected on ("alpha" unless set)
	onClear    func(*engine.Snapshot) // nil: nothing more than the fault goes
	faults     []map[string]any       // the fault specs posted
	events     []engine.Event         // what GET /v1/events answers
	failed     []engine.RequestTrace  // what GET /v1/requests?failed=true answers
	admin      *httptest.Server
	rpc        *httptest.Server
}

func newStubInstance(t *testing.T, st engine.Snapshot, onInject func(*engine.Snapshot)) *stubInstance {
	t.Helper()
	s := &stubInstance{st: st, onInject: onInject}
	if onInject == nil {
		s.onInject = func(*engine.Snapshot) { t.Error("the drill injected a fault") }
	}
	s.admin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/status":
			s.st.Time = time.Now()
			json.NewEncoder(w).Encode(s.st)
		case r.Method == http.MethodGet && r.URL.Path == "/v1/requests" && r.URL.Query().Get("failed") == "true":
			json.NewEncoder(w).Encode(engine.RequestTraces{Enabled: true, Capacity: 1000, Requests: append([]engine.RequestTrace{}, s.failed...)})
		case r.Method == http.MethodGet && r.URL.Path == "/v1/events":
			json.NewEncoder(w).Encode(map[string][]engine.Event{"events": append([]engine.Event{}, s.events...)})
		case r.Method == http.MethodPost && r.URL.Path == "/v1/endpoints/"+s.faultee()+"/fault":
			var spec map[string]any
			json.NewDecoder(r.Body).Decode(&spec)
			s.faults = append(s.faults, spec)
			s.onInject(&s.st)
			json.NewEncoder(w).Encode(s.st.Endpoints[0])
		case r.Method == http.MethodDelete && r.URL.Path == "/v1/endpoints/"+s.faultee()+"/fault":
			for i := range s.st.Endpoints {
				s.st.Endpoints[i].Fault = nil
			}
			if s.onClear != nil {
				s.onClear(&s.st)
			}
			json.NewEncoder(w).Encode(s.st.Endpoints[0])
		case r.URL.Path == "/v1/drill" || strings.HasPrefix(r.URL.Path, "/v1/drill/"):
			fmt.Fprint(w, `{"id":"stub","holder":"test","expires":"2099-01-01T00:00:00Z"}`)
		default:
			t.Errorf("unexpected admin call %s %s", r.Method, r.URL)
			http.NotFound(w, r)
		}
	}))
	s.rpc = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		who := s.answerer
		s.st.Totals.Requests++ // a client request, as the instance counts it
		s.mu.Unlock()
		if who == "" {
			who = "alpha"
		}
		w.Header().Set(bench.HeaderEndpoint, who)
		w.Header().Set(bench.HeaderAttempts, "1")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`)
	}))
	t.Cleanup(func() {
		s.admin.Close()
		s.rpc.Close()
	})
	return s
}

// faultee is the endpoint the test expects the fault on.
func (s *stubInstance) faultee() string {
	if s.onInjectAt == "" {
		return "alpha"
	}
	return s.onInjectAt
}

// stubEndpoint is a routable, closed endpoint answering in ms.
func stubEndpoint(name string, ms float64) engine.EndpointSnapshot {
	lat := time.Duration(ms * float64(time.Millisecond))
	return engine.EndpointSnapshot{Name: name, Routable: true, Breaker: engine.BreakerSnapshot{State: engine.BreakerClosed},
		Latency: engine.LatencyStats{Count: 100, P50: lat, P99: lat},
		Score:   engine.ScoreParts{Latency: lat, LatencySource: "endpoint", ErrorFactor: 1, TailFactor: 1, LoadFactor: 1, Cost: lat}}
}

// stubStatus is a status of endpoints with the drill's thresholds.
func stubStatus(eps ...engine.EndpointSnapshot) engine.Snapshot {
	return engine.Snapshot{Settings: engine.Settings{BreakerFailures: 3, BreakerSuccesses: 3, BreakerCooldown: time.Second, RouterTolerance: 0.25},
		Endpoints: eps}
}

// healthyPair is a status of alpha (20 ms) and beta (40 ms), both routable
// and closed, alpha the cheaper by the router's cost.
func healthyPair() engine.Snapshot {
	return stubStatus(stubEndpoint("alpha", 20), stubEndpoint("beta", 40))
}
