package engine_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// The endpoint that took the latest write gets no more writes first while
// breaker.max_open_share holds its failing breaker closed: held closed, it
// failed enough to open and is ranked last, as an open one is left. Seen
// live: another endpoint's breaker open, the taker answering HTML, 30 of
// 30 writes in 6 s went to it and failed while a third endpoint was
// healthy (its write_affinity window lasts 30 s after its last good write).
func TestWriteAffinity_EndpointHeldClosedByTheCapTakesNoWritesFirst(t *testing.T) {
	names := []string{"a", "b", "c"}
	nodes := map[string]*mempoolNode{}
	for _, name := range names {
		nodes[name] = newMempoolNode(t, name)
	}
	h := startHarness(t, nil, func(c *engine.Config) {
		for i, name := range names {
			c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: name, URL: nodes[name].srv.URL,
				Provider: "p" + strconv.Itoa(i), Region: "r" + strconv.Itoa(i)})
		}
		c.Breaker.MaxOpenShare = 0.5 // one of three may be open
	})
	r := h.call(1000, "eth_sendRawTransaction", rawTx(0))
	mustOK(t, r)
	taker := r.endpoint
	var others []string
	for _, name := range names {
		if name != taker {
			others = append(others, name)
		}
	}
	failProbes := func(name string) {
		t.Helper()
		h.mustDo(h.mustRequest("POST", "/v1/endpoints/"+name+"/fault", `{"mode":"error"}`))
		for range 3 {
			if res, err := h.eng.Probe(context.Background(), name, "eth_blockNumber", nil); err != nil || res.OK {
				t.Fatalf("probe of %s under an error fault: ok=%v err=%v", name, res.OK, err)
			}
		}
	}
	failProbes(others[0])
	if b := h.endpoint(others[0]).Breaker; b.State != engine.BreakerOpen {
		t.Fatalf("%s: breaker %s after 3 failures; want open", others[0], b.State)
	}
	failProbes(taker)
	if b := h.endpoint(taker).Breaker; b.State != engine.BreakerClosed || !b.HeldClosed {
		t.Fatalf("%s: breaker %s, held_closed %v; want closed and held closed by the cap", taker, b.State, b.HeldClosed)
	}
	for i := 1; i <= 5; i++ {
		r := h.call(1000+i, "eth_sendRawTransaction", rawTx(i))
		mustOK(t, r)
		if r.endpoint != others[1] || r.attempts != 1 {
			t.Fatalf("write %d answered by %s after %d attempts; want %s, the healthy one, at once (%s held closed, %s open)",
				i, r.endpoint, r.attempts, others[1], taker, others[0])
		}
	}
}
