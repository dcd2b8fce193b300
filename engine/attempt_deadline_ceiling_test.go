package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint whose learnt deadline (quantile × factor) would pass the
// request's own deadline gets the request's deadline as its attempt
// deadline, "ceiling": no attempt outlives its request, and the status
// shows no attempt deadline longer than the request may wait.
func TestDeadline_AttemptDeadlineIsCappedAtTheRequestDeadline(t *testing.T) {
	t.Parallel()
	const requestTimeout = time.Second
	h := newHarness(t, func(c *engine.Config) { c.Server.RequestTimeout = requestTimeout },
		sim.Config{Latency: fixed(400 * time.Millisecond)})
	for i := range 6 { // past minRouteSamples answers: 400 ms × factor 3 = 1.2 s learnt
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	m := h.endpoint("s0").Methods["eth_getBalance"]
	if m.AttemptTimeout != requestTimeout || m.AttemptTimeoutSource != "ceiling" {
		t.Fatalf("attempt deadline %s (%s) after %d answers of 400 ms; want server.request_timeout %s (ceiling)",
			m.AttemptTimeout, m.AttemptTimeoutSource, m.Latency.Count, requestTimeout)
	}
}
