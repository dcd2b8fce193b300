package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
	"github.com/rpcdash/rpcdash/internal/testutil"
)

// The pool's last minute and its methods' are the same minute: with one
// method, the method's client figures are the pool's, whenever the method
// first came. A method's window counted from its first request aged out on
// its own boundaries: seen at a status of a serve run, one method's
// requests 2065 beside the pool's 1939, and 49.9 requests a second beside
// the pool's 23.5 for the same 1000 requests.
func TestRecentTraffic_MethodsShareThePoolsMinute(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	r := newRecentTraffic(clock.Now)
	check := func(when string) {
		t.Helper()
		pool, m := r.pool.stats(), r.methodStats("eth_getBalance")
		if m != pool {
			t.Errorf("%s: eth_getBalance %+v, the pool %+v: the only method must read as the pool", when, m, pool)
		}
	}
	clock.Advance(3 * time.Second) // the method first comes 3 s after start
	r.observe("eth_getBalance", 30*time.Millisecond, clientAnswered, 10)
	check("at 3s")
	clock.Advance(3 * time.Second)
	r.observe("eth_getBalance", 700*time.Millisecond, clientFailed, 10)
	check("at 6s")
	clock.Advance(20 * time.Second)
	check("at 26s")
	clock.Advance(36 * time.Second) // the pool's first 5 s have aged out
	check("at 62s")
	if got := r.pool.stats().Requests; got != 10 {
		t.Errorf("at 62s the pool's last minute holds %d requests, want the 10 of 6s", got)
	}
}

// An endpoint's figures and its methods' cover the same span: with one
// method, the method's latency and rates over the stats window are the
// endpoint's. A method's window counted from the method's first attempt
// aged out a minute apart from the endpoint's (seen in a serve run: an
// endpoint's 1453 attempts beside its methods' 2203).
func TestEndpointStats_MethodsShareTheEndpointsWindow(t *testing.T) {
	e, clock := clockedEngine(t, 1, func(c *Config) { c.Probes.Enabled = false })
	ep := e.endpoints[0]
	record := func(d time.Duration) {
		st := ep.stats("eth_getBalance")
		ep.latency.Record(d)
		st.latency.Record(d)
		ep.rates.Count(window.Attempts, window.Success)
		st.rates.Count(window.Attempts, window.Success)
	}
	check := func(when string) {
		t.Helper()
		var es EndpointSnapshot
		for _, s := range e.Snapshot().Endpoints {
			if s.Name == ep.Name {
				es = s
			}
		}
		m := es.Methods["eth_getBalance"]
		if m.Latency.Count != es.Latency.Count || m.Latency.P50 != es.Latency.P50 || m.Rates.Attempts != es.Rates.Attempts {
			t.Errorf("%s: eth_getBalance %d answers (p50 %s) of %d attempts, the endpoint %d (p50 %s) of %d: its only method must read as the endpoint",
				when, m.Latency.Count, m.Latency.P50, m.Rates.Attempts, es.Latency.Count, es.Latency.P50, es.Rates.Attempts)
		}
	}
	clock.Advance(30 * time.Second) // the method first comes 30 s after start
	record(700 * time.Millisecond)
	clock.Advance(60 * time.Second)
	record(30 * time.Millisecond)
	check("at 1m30s")
	clock.Advance(3*time.Minute + 35*time.Second) // the endpoint's first minute has aged out
	check("at 5m05s")
}
