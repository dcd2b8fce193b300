package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// cannotServePool is a pool of u1 and u2, which answer every method but the
// probes' -32601, and g, which answers the probes and never answers the
// method m; each endpoint's pace is learnt from ten probes, so that its
// attempt deadline is its own, not the cold one.
func cannotServePool(t *testing.T, m string, mut func(*engine.Config)) (*harness, *methodServer) {
	u1 := newMethodServer(t, 0, nil, nil, nil)
	u2 := newMethodServer(t, 0, nil, nil, nil)
	g := newMethodServer(t, 0, nil, []string{m}, nil)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{
			{Name: "u1", URL: u1.srv.URL, Provider: "p1"},
			{Name: "u2", URL: u2.srv.URL, Provider: "p2"},
			{Name: "g", URL: g.srv.URL, Provider: "p3"},
		}
		c.Server.RequestTimeout = 30 * time.Second // the cold deadline: 10 s
		if mut != nil {
			mut(c)
		}
	})
	for range 10 {
		for _, name := range []string{"u1", "u2", "g"} {
			if _, err := h.eng.Probe(ctxT(t, 5*time.Second), name, "eth_chainId", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return h, g
}

// Two endpoints say at once that they do not have the method; the third,
// which has never answered it, hangs. A client of either of the two has the
// -32601 at once: the read waits on the third only to its attempt deadline,
// not until it is proven hung (the cold deadline, 10 s, and its silence),
// and the next reads, while it has answered nothing since, not at all.
func TestCannotServe_AnEndpointNotKnownToServeTheMethodIsWaitedForOnlyToItsDeadline(t *testing.T) {
	t.Parallel()
	const m = "eth_maxPriorityFeePerGas"
	h, g := cannotServePool(t, m, func(c *engine.Config) { c.Hedge.Enabled = false })
	for i := range 3 {
		r := h.call(i, m)
		if e := r.rpcError(); e == nil || e["code"].(float64) != -32601 {
			t.Fatalf("call %d: HTTP %d %s; want the endpoints' -32601", i, r.status, r.body)
		}
		if r.took > 5*time.Second {
			t.Fatalf("call %d answered in %v: it waited on g as on an endpoint that serves the method", i, r.took.Round(time.Millisecond))
		}
	}
	// Asked once: past its deadline unanswered it is suspect, and the
	// next reads neither ask nor wait for it.
	if n := g.received(m); n != 1 {
		t.Fatalf("g was asked %d times; want once", n)
	}
}

// An endpoint out of routing (its breaker open) is a read's last resort
// after the routable ones failed, but not after they said they cannot
// serve the method: unreachable, it held each such read 3 s.
func TestCannotServe_NoLastResortAfterEveryRoutableEndpointSaidItCannotServe(t *testing.T) {
	t.Parallel()
	const m = "eth_maxPriorityFeePerGas"
	h, g := cannotServePool(t, m, nil)
	g.mu.Lock()
	g.cuts["eth_chainId"] = true // its probes fail from now on
	g.mu.Unlock()
	for i := 0; h.endpoint("g").Breaker.State != engine.BreakerOpen; i++ {
		if i == 10 {
			t.Fatalf("g's breaker %s after 10 failed probes", h.endpoint("g").Breaker.State)
		}
		h.eng.Probe(ctxT(t, 5*time.Second), "g", "eth_chainId", nil)
	}
	r := h.call(1, m)
	if e := r.rpcError(); e == nil || e["code"].(float64) != -32601 {
		t.Fatalf("HTTP %d %s; want the endpoints' -32601", r.status, r.body)
	}
	if r.attempts != 2 {
		t.Fatalf("%d attempts; want 2: u1 and u2, not g past its open breaker", r.attempts)
	}
	if g.received(m) != 0 {
		t.Fatalf("g received %s %d times", m, g.received(m))
	}
}
