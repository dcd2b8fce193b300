package engine_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// writeTaker starts two mempool nodes, a and b, under an engine with the
// request and breaker cooldown given, and sends a first write: taker is
// the node that took it (write affinity holds the next ones there).
func writeTaker(t *testing.T, requestTimeout, cooldown time.Duration) (h *harness, nodes map[string]*mempoolNode, taker string) {
	t.Helper()
	nodes = map[string]*mempoolNode{"a": newMempoolNode(t, "a"), "b": newMempoolNode(t, "b")}
	h = startHarness(t, nil, func(c *engine.Config) {
		for i, name := range []string{"a", "b"} {
			c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: name, URL: nodes[name].srv.URL,
				Provider: "p" + strconv.Itoa(i), Region: "r" + strconv.Itoa(i)})
		}
		c.Server.RequestTimeout = requestTimeout
		c.Breaker.Cooldown = cooldown
	})
	r := h.call(1000, "eth_sendRawTransaction", rawTx(0))
	mustOK(t, r)
	return h, nodes, r.endpoint
}

// An endpoint that hangs every write while it answers its probes takes no
// more writes first once one hung on it: they go to the healthy endpoint.
// Each probe's answer said it was not silent, and write affinity put it
// first again: seen live, 60 of 60 writes timed out on it beside a healthy
// endpoint that was never asked.
func TestMethodHang_AnEndpointHangingWritesWhileItsProbesAnswerTakesNoMoreFirst(t *testing.T) {
	t.Parallel()
	h, nodes, taker := writeTaker(t, time.Second, time.Minute)
	other := map[string]string{"a": "b", "b": "a"}[taker]
	nodes[taker].writeDelay.Store(int64(time.Hour))
	probe := func() {
		t.Helper()
		if res, err := h.eng.Probe(context.Background(), taker, "eth_chainId", nil); err != nil || !res.OK {
			t.Fatalf("probe of %s: ok=%v err=%v %s", taker, res.OK, err, res.Err)
		}
	}
	probe()
	r := h.call(1001, "eth_sendRawTransaction", rawTx(1))
	if r.rpcError() == nil {
		t.Fatalf("write 1 answered by %s; want it lost on %s, which hangs writes", r.endpoint, taker)
	}
	for i := 2; i <= 4; i++ {
		probe()
		r := h.call(1000+i, "eth_sendRawTransaction", rawTx(i))
		if r.endpoint != other || r.rpcError() != nil || r.attempts != 1 {
			t.Fatalf("write %d: answered by %q after %d attempts, error %v; want %s at once (%s hangs writes)", i, r.endpoint, r.attempts, r.rpcError(), other, taker)
		}
	}
	ms := h.endpoint(taker).Methods["eth_sendRawTransaction"]
	if until := time.Until(ms.HungUntil); until <= 50*time.Second || until > time.Minute {
		t.Errorf("%s: eth_sendRawTransaction hung_until %v from now; want about breaker.cooldown (1m)", taker, until)
	}
	if !h.endpoint(other).Methods["eth_sendRawTransaction"].HungUntil.IsZero() {
		t.Errorf("%s: marked hung; it answered", other)
	}
}

// The mark lapses after its hold however often the router looks at the
// endpoint: one that recovered, kept from writes by write affinity, was
// marked hung again every cooldown for good (the router renewed the hold
// each time it ranked it).
func TestMethodHang_TheMarkOfARecoveredEndpointLapses(t *testing.T) {
	t.Parallel()
	h, nodes, taker := writeTaker(t, 600*time.Millisecond, 1500*time.Millisecond)
	nodes[taker].writeDelay.Store(int64(time.Hour))
	if r := h.call(1001, "eth_sendRawTransaction", rawTx(1)); r.rpcError() == nil {
		t.Fatalf("write 1 answered by %s; want it lost on %s", r.endpoint, taker)
	}
	nodes[taker].writeDelay.Store(0)
	marked := func() bool { return !h.endpoint(taker).Methods["eth_sendRawTransaction"].HungUntil.IsZero() }
	if !marked() {
		t.Fatalf("%s not marked hung after its write hung", taker)
	}
	// Writes every 50 ms for 4.5 s: 3 cooldowns.
	for i := 2; i < 92; i++ {
		mustOK(t, h.call(1000+i, "eth_sendRawTransaction", rawTx(i)))
		time.Sleep(50 * time.Millisecond)
	}
	if marked() {
		t.Errorf("%s still marked hung 3 cooldowns after its one hang: %v", taker, h.endpoint(taker).Methods["eth_sendRawTransaction"].HungUntil)
	}
}
