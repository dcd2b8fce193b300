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
// openFailAndReadmit makes s0 answer HTTP 500 until its breaker opens,
// has it fail lastResort reads while open (s1 drained: s0 is the last
// resort of each), then clears it and sends reads until its trials close
// it; it returns the failures s0's rates counted before it opened.
func openFailAndReadmit(t *testing.T, h *harness, first, lastResort int) (opened int64) {
	t.Helper()
	fail, well := 1.0, 0.0
	if err := h.sims[0].Apply(sim.ControlRequest{ErrorRate: &fail}); err != nil {
		t.Fatal(err)
	}
	for i := 0; h.endpoint("s0").Breaker.State != engine.BreakerOpen; i++ {
		if i == 20 {
			t.Fatalf("s0 answering HTTP 500 to everything: breaker %s after 20 reads", h.endpoint("s0").Breaker.State)
		}
		mustOK(t, h.call(first+i, "eth_getBalance", addr, "latest")) // failed over to s1
	}
	opened = h.endpoint("s0").Rates.Failures
	if err := h.eng.Drain(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	for i := range lastResort {
		h.call(first+100+i, "eth_getBalance", addr, "latest")
	}
	if got := h.endpoint("s0").Rates.Failures; got < opened+int64(lastResort) {
		t.Fatalf("s0 failed %d reads while open, want the %d asked of it", got-opened, lastResort)
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
			t.Fatalf("s0 well again: breaker %s 10 s later", h.endpoint("s0").Breaker.State)
		}
		mustOK(t, h.call(first+200+i, "eth_getBalance", addr, "latest"))
		time.Sleep(50 * time.Millisecond)
	}
	return opened
}

// s1 is 60 ms: the failures that opened s0 count once s0 has 20 attempts
// (3 in 20: an error factor of 2.5, a cost of 29 ms), and at 40 ms, within
// router.tolerance of 34 ms, a loaded machine's 13.5 ms answers from s0
// made the two equals taking turns (fresh-clone CI: 16 of 20). With the 30
// failed while open counted, s0's cost is over 80 ms.
func TestRouter_AReadmittedEndpointIsNotScoredByTheReadsItFailedWhileOpen(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(60 * time.Millisecond)})
	measureBoth(t, h)
	opened := openFailAndReadmit(t, h, 100, 30)
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
		t.Errorf("s0 (10 ms, readmitted) answered %d of 20 reads after it closed, s1 is 60 ms; s0 %+v, s1's cost %v", on, h.endpoint("s0").Score, h.endpoint("s1").Score.Cost)
	}
}

// Every stretch its breaker was open within the window is left out, not
// only the last: a flapping endpoint opens more than once, and the second
// close brought the first stretch's last-resort failures back (review,
// stop 56).
func TestRouter_AnEndpointOpenTwiceIsNotScoredByEitherStretch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(40 * time.Millisecond)})
	measureBoth(t, h)
	openFailAndReadmit(t, h, 100, 30)
	openFailAndReadmit(t, h, 1000, 0)
	// Outside both stretches: its 10 answers, the failures that opened it
	// twice and the reads since; with the first stretch's 30 back it was
	// over half failed.
	if sc := h.endpoint("s0").Score; sc.FailureRate > 0.35 {
		t.Errorf("s0 readmitted twice: failure rate %.3f over %d attempts; want the 30 failed while first open left out", sc.FailureRate, sc.Attempts)
	}
}
