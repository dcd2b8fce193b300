package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

func TestDrain_StopsNewTrafficAndLetsInFlightFinish(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(300 * time.Millisecond)}, sim.Config{})
	done := make(chan reply, 1)
	go func() { done <- h.call(1, "eth_getBalance", addr, "latest") }() // cold: goes to s0 first
	if err := h.sims[0].WaitFor(ctxT(t, 5*time.Second), func(c sim.Counters) bool { return c.InFlight == 1 }); err != nil {
		t.Fatal(err)
	}
	if code, b := h.adminDo("POST", "/v1/endpoints/s0/drain", ""); code != 200 {
		t.Fatalf("drain: %d %s", code, b)
	}
	r := <-done
	mustOK(t, r)
	if r.endpoint != "s0" {
		t.Fatalf("in-flight request answered by %s", r.endpoint)
	}
	before := h.sims[0].MethodCount("eth_getBalance")
	for i := 0; i < 50; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.endpoint != "s1" {
			t.Fatalf("drained endpoint answered")
		}
	}
	if got := h.sims[0].MethodCount("eth_getBalance"); got != before {
		t.Fatalf("drained sim counter moved %d → %d", before, got)
	}
	t.Logf("in-flight request finished on the drained endpoint after %s; its counter stayed at %d over 50 reads, all answered by s1", r.took.Round(time.Millisecond), before)
	if !h.endpoint("s0").Drained {
		t.Fatal("status does not show the drain")
	}
	if code, _ := h.adminDo("POST", "/v1/endpoints/s0/undrain", ""); code != 200 {
		t.Fatal("undrain")
	}
	if h.endpoint("s0").Drained {
		t.Fatal("still drained")
	}
	if code, _ := h.adminDo("POST", "/v1/endpoints/nope/drain", ""); code != 404 {
		t.Fatalf("drain of unknown endpoint: %d", code)
	}
}
