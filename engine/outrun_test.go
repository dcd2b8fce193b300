package engine_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A hung endpoint whose attempts all lose to hedges trips its breaker after
// 2 × breaker.failures losses in a row and an attempt deadline of silence.
// When the losses come sooner than that (or rpcdash stalled within the
// silence), the loss that would conclude may never come: the router ranks
// the endpoint behind the others, and its breaker stayed closed for the
// 6 s after a hang in a CI run, until an exploration 5 s later. Now the
// next attempt it gets (a read's first, or a hedge exploring it at once)
// runs on to its deadline when it loses, and that deadline passed
// unanswered trips it.
func TestOutrun_LossesTooSoonToJudgeAreConcludedAtTheNextAttemptsDeadline(t *testing.T) {
	t.Parallel()
	// s0, the quickest, takes the first attempts.
	h, deadline, hungAt := hungAfterWarmUp(t, func(c *engine.Config) {
		c.Hedge.Delay = "20ms"
		// Room for the bursts below to end within s0's deadline of its
		// last answer on a loaded machine.
		c.Breaker.AttemptTimeoutMin = time.Second
		// Every read of the bursts is hedged, as the rule needs: the
		// budget (0.10, burst 10) is no part of it, and a loaded machine's
		// warm-up, its 5 ms answers stretched past the 20 ms delay, spent
		// it on hedges of its own. Beside two busy loops the bursts' later
		// reads then waited s0's deadline unhedged (an overdue attempt, no
		// loss), and s0 lost 3 to 5 reads in 5 bursts: 4 runs in 10.
		c.Hedge.Budget, c.Hedge.BudgetBurst = 1, 1000
	}, 5*time.Millisecond, 60*time.Millisecond)

	// Reads at once, until s0 has lost six: each is hedged to a 60 ms
	// endpoint after 20 ms and wins, 80 ms in, far less than s0's deadline
	// after its last answer.
	id := 1000
	for try := 0; h.endpoint("s0").Accounting.OutrunUnanswered < 6; try++ {
		if try == 5 {
			t.Fatalf("s0 lost only %d reads in 5 bursts: the burst did not reach the loss rule", h.endpoint("s0").Accounting.OutrunUnanswered)
		}
		var wg sync.WaitGroup
		for range 6 - h.endpoint("s0").Accounting.OutrunUnanswered {
			id++
			wg.Add(1)
			go func(id int) {
				defer wg.Done()
				mustOK(t, h.call(id, "eth_getBalance", addr, "latest"))
			}(id)
		}
		wg.Wait()
	}
	if st := h.endpoint("s0").Breaker.State; st != engine.BreakerClosed {
		t.Fatalf("s0's breaker %s after losses %s after its last answer, less than its deadline %s: the rule under test was not reached (events: %s)", st, time.Since(hungAt).Round(time.Millisecond), deadline, eventsSince(h, hungAt))
	}

	// One more read, and nothing after it.
	r := h.call(2000, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if r.endpoint == "s0" {
		t.Fatalf("s0, hung, answered a read")
	}
	var opened engine.Event
	for wait := time.Now(); opened.Time.IsZero() && time.Since(wait) < deadline+time.Second; time.Sleep(10 * time.Millisecond) {
		for _, ev := range breakerStates(h, "s0") {
			if ev.To == "open" {
				opened = ev
			}
		}
	}
	if opened.Time.IsZero() {
		s0 := h.endpoint("s0")
		var last []string
		trs := h.traces("limit=8").Requests
		for _, tr := range trs {
			last = append(last, describe(tr))
		}
		t.Logf("last reads: %s; events: %s", strings.Join(last, " | "), eventsSince(h, hungAt))
		t.Fatalf("s0 hung, lost 6 races unanswered and got one more read: its breaker %s, %d failures in a row, last error %q, %s after the hang", s0.Breaker.State, s0.Breaker.ConsecutiveFailures, s0.LastError, time.Since(hungAt).Round(time.Millisecond))
	}
	if !strings.Contains(opened.Message, "outrun by hedges") {
		t.Errorf("s0's breaker opened for another reason: %q", opened.Message)
	}
	if r.took >= deadline {
		t.Errorf("the last read waited %s, s0's deadline %s: holding s0's attempt must cost the client nothing", r.took, deadline)
	}
	// The held attempt is let go at its deadline, and its release is
	// counted from there, not from the race it lost 80 ms in.
	for _, tr := range h.traces("limit=20").Requests {
		for _, at := range tr.Attempts {
			if tr.ID != r.id || at.Endpoint != "s0" {
				continue
			}
			if at.CancelMS == nil || at.ReleaseMS == nil || *at.CancelMS < ms(deadline)*0.9 || *at.ReleaseMS > ms(deadline)/4 {
				t.Errorf("s0's attempt of the last read, held to its deadline %s: let go at %v ms, released %v ms later (want at its deadline, released at once): %s", deadline, deref(at.CancelMS), deref(at.ReleaseMS), describe(tr))
			}
			if at.CancelMS != nil && at.ReleaseMS != nil {
				t.Logf("s0's held attempt let go at %.0f ms, released %.1f ms later", *at.CancelMS, *at.ReleaseMS)
			}
		}
	}
	t.Logf("s0 opened %s after the hang: %s; the last read took %s", opened.Time.Sub(hungAt).Round(time.Millisecond), opened.Message, r.took.Round(time.Millisecond))
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// hungAfterWarmUp starts three fixed-latency sims (s0 at first, the others
// at others) behind an engine with hedging on and traces kept, as mut
// further sets it; warms the method up with 100 reads; then hangs s0. It
// returns s0's attempt deadline for the method before the hang, and when
// the hang began.
func hungAfterWarmUp(t *testing.T, mut func(*engine.Config), first, others time.Duration) (*harness, time.Duration, time.Time) {
	t.Helper()
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = true
		c.Server.TraceRequests = 1000
		mut(c)
	}, sim.Config{Latency: fixed(first)}, sim.Config{Latency: fixed(others)}, sim.Config{Latency: fixed(others)})
	for i := range 100 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	deadline := h.endpoint("s0").Methods["eth_getBalance"].AttemptTimeout
	h.sims[0].SetMode(sim.ModeHang)
	return h, deadline, time.Now()
}
