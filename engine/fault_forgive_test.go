package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A failover drill run a few times in a row (inject, see it cut out,
// clear, see it back) leaves the breaker's cooldown where it was: each
// fault's open flapped after the last drill's close, and the cooldown
// doubled at each (10 s to 5 m over a console audit's run), keeping a
// healthy endpoint out that long after its fault was cleared.
func TestFault_DrillsInARowLeaveTheBreakersCooldownAtItsBase(t *testing.T) {
	t.Parallel()
	const cooldown = 300 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Cooldown, c.Breaker.MaxCooldown = cooldown, 10*time.Second
		c.Breaker.Failures, c.Breaker.Successes = 2, 1
		// s1 far slower, so that reads still go to s0 first in the next
		// drill: at the same pace, the failures of the drills before
		// ranked s0 behind s1 and it met too few reads to open (2 of 40
		// runs in four processes at once).
	}, sim.Config{Latency: fixed(5 * time.Millisecond)}, sim.Config{Latency: fixed(150 * time.Millisecond)})
	id := 0
	readUntil := func(what string, done func(engine.EndpointSnapshot) bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !done(h.endpoint("s0")); {
			if time.Now().After(deadline) {
				t.Fatalf("s0 never %s: %+v", what, h.endpoint("s0").Breaker)
			}
			id++
			mustOK(t, h.call(id, "eth_getBalance", addr, "latest"))
			time.Sleep(10 * time.Millisecond)
		}
	}
	for drill := 1; drill <= 3; drill++ {
		if err := h.eng.InjectFault(engine.ActorAdmin, "s0", engine.FaultSpec{Mode: engine.FaultError}); err != nil {
			t.Fatal(err)
		}
		readUntil("opened", func(ep engine.EndpointSnapshot) bool { return ep.Breaker.State == engine.BreakerOpen })
		grown := h.endpoint("s0").Breaker.Cooldown
		if err := h.eng.ClearFault(engine.ActorAdmin, "s0"); err != nil {
			t.Fatal(err)
		}
		br := h.endpoint("s0").Breaker
		t.Logf("drill %d: cooldown %s in the fault, %s once cleared", drill, grown, br.Cooldown)
		if br.Cooldown != cooldown {
			t.Fatalf("drill %d: the breaker's cooldown is %s once the fault is cleared, want the base %s", drill, br.Cooldown, cooldown)
		}
		if grown != cooldown && !strings.Contains(lastFaultEvent(h).Message, "cooldown back to 300ms") {
			t.Errorf("drill %d: the clear does not say the cooldown went back: %+v", drill, lastFaultEvent(h))
		}
		readUntil("closed again", func(ep engine.EndpointSnapshot) bool { return ep.Breaker.State == engine.BreakerClosed })
	}
}

func lastFaultEvent(h *harness) engine.Event {
	evs := h.events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == engine.EventFault {
			return evs[i]
		}
	}
	return engine.Event{}
}

// A half-open trial sent into an unreachable fault that the operator
// clears while it waits is not the endpoint's failure: cleared, its
// connection attempt goes on to the endpoint, and a verdict that comes
// after the clear on an attempt sent in the fault is none. The trial
// waited out its 5 s connection timeout after the clear, its deadline
// passed after the clear too, and the breaker reopened with its cooldown
// doubled (a healthy endpoint out for 2m40s).
func TestFault_ATrialSentIntoAFaultClearedMeanwhileIsNotAFailedTrial(t *testing.T) {
	t.Parallel()
	const cooldown = 300 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Cooldown, c.Breaker.MaxCooldown = cooldown, 10*time.Second
		c.Breaker.Failures, c.Breaker.Successes = 2, 1
		c.Breaker.AttemptTimeoutMin = time.Second
	}, sim.Config{Latency: fixed(5 * time.Millisecond)}, sim.Config{Latency: fixed(50 * time.Millisecond)})
	h.warm(20)
	if err := h.eng.InjectFault(engine.ActorAdmin, "s0", engine.FaultSpec{Mode: engine.FaultRefused}); err != nil {
		t.Fatal(err)
	}
	id := 100
	for deadline := time.Now().Add(5 * time.Second); h.endpoint("s0").Breaker.State != engine.BreakerOpen; id++ {
		if time.Now().After(deadline) {
			t.Fatalf("s0 never opened: %+v", h.endpoint("s0").Breaker)
		}
		mustOK(t, h.call(id, "eth_getBalance", addr, "latest"))
	}
	if err := h.eng.InjectFault(engine.ActorAdmin, "s0", engine.FaultSpec{Mode: engine.FaultUnreachable}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(h.endpoint("s0").Breaker.NextTrialAt) + 20*time.Millisecond)
	// The trial: a read sent to s0 first, held by the fault.
	done := make(chan reply, 1)
	go func() { done <- h.call(id, "eth_getBalance", addr, "latest") }()
	time.Sleep(200 * time.Millisecond)
	if err := h.eng.ClearFault(engine.ActorAdmin, "s0"); err != nil {
		t.Fatal(err)
	}
	cleared := time.Now()
	r := <-done
	mustOK(t, r)
	tr := h.settledTrace(r.id)
	if len(tr.Attempts) == 0 || tr.Attempts[0].Endpoint != "s0" {
		t.Fatalf("the read's attempts %v: want its first on s0, the trial", attemptOutcomes(tr))
	}
	for deadline := time.Now().Add(5 * time.Second); h.endpoint("s0").Breaker.State != engine.BreakerClosed; id++ {
		if time.Now().After(deadline) {
			t.Fatalf("s0 not closed after the fault was cleared: %+v", h.endpoint("s0").Breaker)
		}
		mustOK(t, h.call(id+1, "eth_getBalance", addr, "latest"))
		time.Sleep(20 * time.Millisecond)
	}
	for _, ev := range h.events() {
		if ev.Type == engine.EventBreaker && ev.Endpoint == "s0" && ev.To == "open" && ev.Time.After(cleared) {
			t.Errorf("s0 reopened after the fault was cleared: %s (the trial's read: %v)", ev.Message, attemptOutcomes(tr))
		}
	}
	t.Logf("the trial's read: %v", attemptOutcomes(tr))
}
