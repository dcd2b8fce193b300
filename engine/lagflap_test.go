package engine_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// rejoins moves the chain on round by round with s1 in sync until it is
// readmitted, and returns how many rounds that took (at most max).
func (r *headRig) rejoins(max int) int {
	r.t.Helper()
	r.sims[1].SetHeadLag(0)
	for i := 1; i <= max; i++ {
		r.round()
		if !r.endpoint("s1").LagExcluded {
			return i
		}
	}
	r.t.Fatalf("s1 not readmitted after %d rounds in sync: %+v", max, r.endpoint("s1"))
	return 0
}

// fallsBack puts s1 10 blocks behind and probes once; it returns the
// lagging event's message.
func (r *headRig) fallsBack() string {
	r.t.Helper()
	r.sims[1].SetHeadLag(10)
	r.round()
	evs := r.headEvents("s1")
	if ep := r.endpoint("s1"); !ep.LagExcluded || len(evs) == 0 || !strings.HasPrefix(evs[len(evs)-1], "in-sync>lagging: ") {
		r.t.Fatalf("10 behind: excluded %v, events %q", ep.LagExcluded, evs)
	}
	return evs[len(evs)-1]
}

// An endpoint hovering at the lag mark went out and back in on every
// swing (24 events a minute at 1 s probes). Lagging again within four
// times the stretch it was last out is a flap: its next readmission needs
// twice the probes in sync, up to a breaker.max_cooldown's worth of
// probes.interval; lagging again later forgets. A stale fault's
// exclusions are the fault's.
func TestHeads_LaggingAgainSoonAfterReadmissionDoublesTheProbesToRejoin(t *testing.T) {
	r := newHeadRig(t, 2, func(c *engine.Config) {
		c.Probes.Recover = 3
		c.Probes.Interval = time.Second
		c.Breaker.MaxCooldown = 20 * time.Second // at most 20 probes
	})
	r.warmUp()
	if msg := r.fallsBack(); strings.Contains(msg, "flapping") {
		t.Fatalf("the first exclusion is no flap: %q", msg)
	}
	if n := r.rejoins(10); n != 3 {
		t.Fatalf("first readmission after %d rounds in sync, want probes.recover 3", n)
	}
	var seen []string
	for _, want := range []struct {
		need  int
		flaps int64
		out   string // the stretch it was last out
	}{{6, 1, "3s"}, {12, 2, "6s"}, {20, 3, "12s"}} {
		msg := r.fallsBack() // one round after its readmission
		wantMsg := "lagging again 1s after it was readmitted, within 4 × the " + want.out + " it was out (flapping): it is readmitted after " +
			strconv.Itoa(want.need) + " in-sync probes in a row"
		if !strings.HasSuffix(msg, wantMsg) {
			t.Fatalf("relapse: event %q, want it to end %q", msg, wantMsg)
		}
		if ep := r.endpoint("s1"); ep.LagRecoverNeed != int64(want.need) || ep.LagFlaps != want.flaps {
			t.Fatalf("after the relapse: lag_recover_need %d, lag_flaps %d; want %d, %d", ep.LagRecoverNeed, ep.LagFlaps, want.need, want.flaps)
		}
		n := r.rejoins(30)
		seen = append(seen, strconv.Itoa(n))
		if n != want.need {
			t.Fatalf("readmitted after %d rounds in sync, want %d (rounds so far %q)", n, want.need, seen)
		}
	}
	t.Logf("rounds in sync to rejoin after each flap: %q (probes.recover 3, cap 20)", seen)

	// In sync for more than four times the 20 s it was last out: the next
	// exclusion is no flap, and 3 probes readmit it again.
	r.clock.Advance(80 * time.Second)
	r.round()
	if msg := r.fallsBack(); strings.Contains(msg, "flapping") {
		t.Fatalf("lagging 81 s after a readmission that took 20 s: %q", msg)
	}
	if ep := r.endpoint("s1"); ep.LagRecoverNeed != 3 || ep.LagFlaps != 0 {
		t.Fatalf("forgotten: lag_recover_need %d, lag_flaps %d; want 3, 0", ep.LagRecoverNeed, ep.LagFlaps)
	}
	if n := r.rejoins(10); n != 3 {
		t.Fatalf("readmitted after %d rounds in sync, want 3", n)
	}

	// A stale fault takes it out (its head frozen); cleared, it rejoins in
	// 3 and a relapse right after is no flap: the stretch out was the
	// fault's.
	if err := r.eng.InjectFault(engine.ActorAdmin, "s1", engine.FaultSpec{Mode: engine.FaultStale, Rate: 1}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10 && !r.endpoint("s1").LagExcluded; i++ {
		r.round()
	}
	evs := r.headEvents("s1")
	if !r.endpoint("s1").LagExcluded || strings.Contains(evs[len(evs)-1], "flapping") {
		t.Fatalf("s1 under a stale fault, readmitted a few seconds before: excluded %v, event %q; want excluded, no flap", r.endpoint("s1").LagExcluded, evs[len(evs)-1])
	}
	if err := r.eng.ClearFault(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	if n := r.rejoins(10); n != 3 {
		t.Fatalf("after the stale fault: readmitted after %d rounds, want 3", n)
	}
	if msg := r.fallsBack(); strings.Contains(msg, "flapping") {
		t.Fatalf("a relapse after the fault's stretch counted as a flap: %q", msg)
	}
	if ep := r.endpoint("s1"); ep.LagRecoverNeed != 3 || ep.LagFlaps != 0 {
		t.Fatalf("after the fault: lag_recover_need %d, lag_flaps %d; want 3, 0", ep.LagRecoverNeed, ep.LagFlaps)
	}
}
