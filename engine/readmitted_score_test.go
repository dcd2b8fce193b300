package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// measureBoth gives s1 a latency figure (s0 drained for a few reads), then
// s0 one.
func measureBoth(t *testing.T, h *harness) {
	t.Helper()
	if err := h.eng.Drain(engine.ActorAdmin, "s0"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if err := h.eng.Undrain(engine.ActorAdmin, "s0"); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustOK(t, h.call(10+i, "eth_getBalance", addr, "latest"))
	}
}

// The reads that fail over to an endpoint while its breaker is open (the
// last resort, every routable endpoint having failed) say nothing of how
// it ranks beside the others once it is back: they are left out of its
// routing score. They stayed in its failure rate for the rest of the
// 5-minute window, so the fastest endpoint, readmitted and well, was
// ranked after slower ones for minutes (console audit, stop 56: an error
// factor of 8.75, 1,165 such failures in an outage of every endpoint).
// The error rate shown keeps them: it is the window's.
func TestRouter_AReadmittedEndpointIsNotScoredByTheReadsItFailedWhileOpen(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(40 * time.Millisecond)})
	measureBoth(t, h)
	fail, well := 1.0, 0.0
	if err := h.sims[0].Apply(sim.ControlRequest{ErrorRate: &fail}); err != nil {
		t.Fatal(err)
	}
	for i := 0; h.endpoint("s0").Breaker.State != engine.BreakerOpen; i++ {
		if i == 20 {
			t.Fatalf("s0 answering HTTP 500 to everything: breaker %s after 20 reads", h.endpoint("s0").Breaker.State)
		}
		mustOK(t, h.call(100+i, "eth_getBalance", addr, "latest")) // failed over to s1
	}
	opened := h.endpoint("s0").Rates.Failures
	// s1 drained: s0, open, is the last resort of every read.
	if err := h.eng.Drain(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		h.call(200+i, "eth_getBalance", addr, "latest")
	}
	if got := h.endpoint("s0").Rates.Failures; got < opened+30 {
		t.Fatalf("s0 failed %d reads while open, want the 30 asked of it", got-opened)
	}
	if err := h.sims[0].Apply(sim.ControlRequest{ErrorRate: &well}); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Undrain(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; h.endpoint("s0").Breaker.State != engine.BreakerClosed; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("s0 well again: breaker %s 10 s later (cooldown 1s)", h.endpoint("s0").Breaker.State)
		}
		mustOK(t, h.call(300+i, "eth_getBalance", addr, "latest"))
		time.Sleep(50 * time.Millisecond)
	}
	s0 := h.endpoint("s0")
	if s0.Score.ErrorFactor > 2 {
		t.Errorf("s0 readmitted: failure rate %.3f over %d attempts, error factor %.2f; want the 30 it failed while open left out", s0.Score.FailureRate, s0.Score.Attempts, s0.Score.ErrorFactor)
	}
	if s0.Rates.Failures < opened+30 {
		t.Errorf("s0's rates show %d failures, want the window's %d and more still shown", s0.Rates.Failures, opened+30)
	}
	var on int
	for i := range 20 {
		r := h.call(400+i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.endpoint == "s0" {
			on++
		}
	}
	if on < 18 {
		t.Errorf("s0 (10 ms, readmitted) answered %d of 20 reads after it closed, s1 is 40 ms", on)
	}
}
