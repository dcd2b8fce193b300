package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A zero delay is a real one: the duplicate leaves with the primary, so a
// slow primary costs nothing but the duplicate's own latency.
func TestHedge_ZeroDelayDuplicatesAtOnce(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("0s")(c)
		c.Hedge.Budget = 1
	}, sim.Config{Latency: fixed(400 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	r := h.call(1, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if !r.hedged || r.attempts != 2 || r.endpoint != "s1" {
		t.Fatalf("hedged=%v attempts=%d endpoint=%s", r.hedged, r.attempts, r.endpoint)
	}
	// 20 ms answer, sent at once: well below the 400 ms primary, and below
	// any delay the engine would otherwise have used (cold 250 ms).
	if r.took >= 250*time.Millisecond {
		t.Fatalf("client latency %s: the duplicate waited", r.took)
	}
	m := h.status().Methods["eth_getBalance"]
	if m.Hedge == nil || m.Hedge.Delay != 0 || m.Hedge.DelaySource != "config" || m.HedgesFired != 1 {
		t.Fatalf("method accounting %+v", m)
	}
}

// PUT /v1/hedge sets the quantile and the budget too, and a zero delay;
// GET /v1/status shows what is in force.
func TestAdmin_HedgeUpdateSetsZeroDelayQuantileAndBudget(t *testing.T) {
	h := newHarness(t, hedgeOn("auto"), sim.Config{}, sim.Config{})
	for _, body := range []string{`{"delay":"0s","budget":1}`, `{"quantile":0.9}`} {
		if code, b := h.adminDo("PUT", "/v1/hedge", body); code != 200 {
			t.Fatalf("%s: HTTP %d %s", body, code, b)
		}
	}
	st := h.status().Hedge
	if st.Delay != 0 || st.DelaySource != "live" || st.Quantile != 0.9 || st.Budget != 1 {
		t.Fatalf("hedge status %+v", st)
	}
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"delay":"auto","quantile":0.95,"budget":0.1}`); code != 200 {
		t.Fatalf("HTTP %d %s", code, b)
	}
	// Set back to the config's delay, it is the config's again: "live"
	// read as a change left behind (after rpcdash bench --admin restored it).
	if st := h.status().Hedge; st.Delay != engine.AutoDelay || st.DelaySource != "config" || st.Quantile != 0.95 || st.Budget != 0.1 {
		t.Fatalf("hedge status after restore %+v", st)
	}
	for body, want := range map[string]string{
		`{"quantile":1}`:                       "quantile",
		`{"quantile":0}`:                       "quantile",
		`{"budget":1.5}`:                       "budget",
		`{"budget":0.5,"method":"eth_call"}`:   "pool-wide",
		`{"delay":"-1s"}`:                      "delay",
		`{"method":"eth_call"}`:                "nothing to change",
		`{"quantile":0.9,"method":"eth_call"}`: "",
	} {
		code, b := h.adminDo("PUT", "/v1/hedge", body)
		if want == "" {
			if code != 200 {
				t.Errorf("%s: HTTP %d %s", body, code, b)
			}
			continue
		}
		var e struct{ Error string }
		_ = json.Unmarshal(b, &e)
		if code != 400 || !containsAll(e.Error, want) {
			t.Errorf("%s: HTTP %d %q, want 400 naming %q", body, code, e.Error, want)
		}
	}
}

func TestSnapshot_ReportsTheThresholdsItIsJudgedBy(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Failures = 4
		c.Breaker.Successes = 2
		c.Breaker.Cooldown = 1500 * time.Millisecond
	}, sim.Config{})
	s := h.status().Settings
	if s.BreakerFailures != 4 || s.BreakerSuccesses != 2 || s.BreakerCooldown != 1500*time.Millisecond || s.RouterTolerance != 0.25 ||
		s.RequestTimeout != 5*time.Second || s.ProbeTrials || s.ProbeInterval != time.Hour {
		t.Fatalf("settings %+v", s)
	}
}

func TestConfig_ZeroHedgeDelayIsValidNegativeIsNot(t *testing.T) {
	for delay, ok := range map[string]bool{"0s": true, "0": true, "auto": true, "-1ms": false, "soon": false} {
		c := engine.Default()
		c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
		c.Hedge.Delay = delay
		if err := c.Validate(); (err == nil) != ok {
			t.Errorf("hedge.delay %q: %v", delay, err)
		}
	}
	if d, err := engine.ParseDelay("auto"); err != nil || d != engine.AutoDelay {
		t.Errorf("auto: %v %v", d, err)
	}
}
