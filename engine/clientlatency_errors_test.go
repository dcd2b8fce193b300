package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// The last minute's client latency (the console header's p50/p99, the
// methods' P50–P99, the status's client.p50_ms …) is of the requests
// answered: rpcdash's own errors are counted apart (err N S%), and when
// every endpoint fails at once they come back in a millisecond, so counted
// in they made the latency look better the worse things went (an audit:
// with half the reads failing, p99 157 ms shown against 422 ms for the
// reads answered).
func TestClientStats_LatencyIsOfAnsweredRequestsNotFastErrors(t *testing.T) {
	t.Parallel()
	url := scriptedUpstreamReq(t, func(w http.ResponseWriter, id json.RawMessage, method, params string) bool {
		if method != "eth_getBalance" {
			return false
		}
		if strings.Contains(params, "dead") { // this address's reads fail at once
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}
		time.Sleep(60 * time.Millisecond)
		return false
	})
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Failures = 1000 // the failures must not turn into refusals
		c.Endpoints = c.Endpoints[:0]
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "s0", URL: url})
	})
	var answered []time.Duration
	errors := 0
	for i := 0; i < 30; i++ {
		who := addr
		if i%2 == 1 {
			who = "0x00000000000000000000000000000000000000dead"
		}
		r := h.call(i, "eth_getBalance", who, "latest")
		switch {
		case r.status == 200 && strings.Contains(string(r.body), `"result"`):
			answered = append(answered, r.took)
		default:
			errors++
		}
	}
	slices.Sort(answered)
	if len(answered) != 15 || errors != 15 {
		t.Fatalf("answered %d, errors %d: want 15 of each", len(answered), errors)
	}
	st := h.status()
	for _, c := range []struct {
		name string
		cs   engine.ClientStats
	}{{"pool", st.Client}, {"eth_getBalance", st.Methods["eth_getBalance"].Client}} {
		if c.cs.Requests != 30 || c.cs.Errors != 15 {
			t.Fatalf("%s: requests %d, errors %d; the client sent 30, 15 failed", c.name, c.cs.Requests, c.cs.Errors)
		}
		// Every answered read took 60 ms upstream and more at the client.
		if c.cs.P50 < 60*time.Millisecond || c.cs.P99 < c.cs.P50 || c.cs.P99 > answered[len(answered)-1]+5*time.Millisecond {
			t.Fatalf("%s: p50 %s p95 %s p99 %s shown; the client measured its answered reads at p50 %s, max %s",
				c.name, c.cs.P50, c.cs.P95, c.cs.P99, answered[len(answered)/2], answered[len(answered)-1])
		}
	}
	t.Logf("pool p50 %s p99 %s, errors %d of %d; client: answered p50 %s max %s", st.Client.P50, st.Client.P99,
		st.Client.Errors, st.Client.Requests, answered[len(answered)/2], answered[len(answered)-1])
}

// scriptedUpstreamReq is scriptedUpstream with the call's params (raw
// JSON) given to answer too; it returns the endpoint's URL.
func scriptedUpstreamReq(t *testing.T, answer func(w http.ResponseWriter, id json.RawMessage, method, params string) bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if answer(w, req.ID, req.Method, string(req.Params)) {
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, req.ID)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The tuning view's "measured p99 since the change" is set beside the
// forecast, which predicts the latency of answers: rpcdash's own errors,
// fast when every endpoint fails, are not in it either (with half the
// reads failing they were half its samples, and its p99 was the answered
// reads' p98).
func TestTuning_TrialMeasuresAnsweredRequestsOnly(t *testing.T) {
	t.Parallel()
	fail := func(w http.ResponseWriter, id json.RawMessage, method, params string) bool {
		if method != "eth_getBalance" {
			return false
		}
		if strings.Contains(params, "dead") {
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}
		time.Sleep(60 * time.Millisecond)
		return false
	}
	a, b := scriptedUpstreamReq(t, fail), scriptedUpstreamReq(t, fail)
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("auto")(c)
		c.Breaker.Failures = 1000
		c.Endpoints = []engine.EndpointConfig{{Name: "s0", URL: a}, {Name: "s1", URL: b}}
	})
	mustOK(t, h.call(0, "eth_getBalance", addr, "latest")) // the method is known: a change of it starts a trial
	if code, body := h.adminDo("PUT", "/v1/hedge", `{"method":"eth_getBalance","delay":"2s"}`); code != 200 {
		t.Fatalf("HTTP %d %s", code, body)
	}
	answered, errors := 0, 0
	for i := 0; i < 30; i++ {
		who := addr
		if i%2 == 1 {
			who = "0x00000000000000000000000000000000000000dead"
		}
		if r := h.call(i, "eth_getBalance", who, "latest"); r.status == 200 && strings.Contains(string(r.body), `"result"`) {
			answered++
		} else {
			errors++
		}
	}
	var md engine.MethodDistribution
	h.getJSON("/v1/methods/eth_getBalance/distribution", &md)
	if tr := md.Trial; tr == nil || tr.Samples != int64(answered) || tr.Measured < 60*time.Millisecond {
		t.Fatalf("trial %+v: want %d samples (the reads answered; %d failed) measured at 60ms or more", tr, answered, errors)
	}
}
