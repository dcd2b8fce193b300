package engine_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// A node that reports itself unhealthy is let back in with hysteresis, as
// a lagging one is: after probes.recover healthy probes in a row, and an
// unhealthy one between starts the count again. One healthy probe brought
// it back, so a Solana node hovering at its "behind" mark went in and out
// on every probe.
func TestProbes_AnUnhealthyEndpointIsReadmittedAfterRecoverHealthyProbes(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Probes.Recover = 3 }, sim.Config{}, sim.Config{})
	out := func() bool {
		return slices.ContainsFunc(h.endpoint("s1").Exclusions, func(x string) bool { return strings.HasPrefix(x, engine.ExcludeUnhealthy) })
	}
	h.eng.Exclude("s1", engine.ExcludeUnhealthy, "getHealth: Node is behind by 42 slots")
	h.eng.Include("s1", engine.ExcludeUnhealthy)
	h.eng.Include("s1", engine.ExcludeUnhealthy)
	h.eng.Exclude("s1", engine.ExcludeUnhealthy, "getHealth: Node is behind by 40 slots") // the count starts again
	for i := 1; i <= 2; i++ {
		h.eng.Include("s1", engine.ExcludeUnhealthy)
		if !out() {
			t.Fatalf("readmitted at healthy probe %d in a row, want 3 (probes.recover)", i)
		}
	}
	h.eng.Include("s1", engine.ExcludeUnhealthy)
	if out() {
		t.Fatalf("still out after 3 healthy probes in a row: %q", h.endpoint("s1").Exclusions)
	}
	var readmitted []string
	for _, ev := range h.events() {
		if ev.Type == engine.EventHead && ev.Endpoint == "s1" && ev.From == engine.ExcludeUnhealthy {
			readmitted = append(readmitted, ev.Message)
		}
	}
	if len(readmitted) != 1 || !strings.Contains(readmitted[0], "after 3 healthy probes in a row") {
		t.Fatalf("readmission events %q, want one naming the 3 healthy probes", readmitted)
	}
	// Wrong chain is not a matter of degree: one probe on the right chain
	// clears it, as before.
	h.eng.Exclude("s0", engine.ExcludeWrongChain, "on chain 5")
	h.eng.Include("s0", engine.ExcludeWrongChain)
	if ex := h.endpoint("s0").Exclusions; len(ex) != 0 {
		t.Fatalf("s0 still excluded after its chain was right: %q", ex)
	}
}

// A node unhealthy again soon after its readmission flapped: the next
// readmission needs twice the healthy probes, as for lag; unhealthy again
// later forgets.
func TestProbes_AnEndpointUnhealthyAgainSoonNeedsTwiceTheHealthyProbes(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, func(c *engine.Config) {
		c.Probes.Recover = 3
		c.Probes.Interval = time.Second
		c.Breaker.MaxCooldown = time.Minute
	}, sim.Config{}, sim.Config{})
	out := func() bool {
		return slices.ContainsFunc(h.endpoint("s1").Exclusions, func(x string) bool { return strings.HasPrefix(x, engine.ExcludeUnhealthy) })
	}
	// healthyProbes probes s1 healthy a second apart until it is back, and
	// returns how many that took.
	healthyProbes := func() int {
		for i := 1; i <= 20; i++ {
			clock.Advance(time.Second)
			h.eng.Include("s1", engine.ExcludeUnhealthy)
			if !out() {
				return i
			}
		}
		t.Fatalf("s1 still unhealthy after 20 healthy probes: %q", h.endpoint("s1").Exclusions)
		return 0
	}
	lastEvent := func() string {
		var last string
		for _, ev := range h.events() {
			if ev.Type == engine.EventHead && ev.Endpoint == "s1" {
				last = ev.Message
			}
		}
		return last
	}
	h.eng.Exclude("s1", engine.ExcludeUnhealthy, "getHealth: Node is behind by 42 slots")
	if n := healthyProbes(); n != 3 {
		t.Fatalf("first readmission after %d healthy probes, want 3", n)
	}
	clock.Advance(time.Second)
	h.eng.Exclude("s1", engine.ExcludeUnhealthy, "getHealth: Node is behind by 41 slots")
	want := "excluded: getHealth: Node is behind by 41 slots; unhealthy again 1s after it was readmitted, within 4 × the 3s it was out (flapping): it is readmitted after 6 healthy probes in a row"
	if got := lastEvent(); got != want {
		t.Fatalf("relapse event %q, want %q", got, want)
	}
	if n := healthyProbes(); n != 6 {
		t.Fatalf("readmission after a flap took %d healthy probes, want 6", n)
	}
	if got := lastEvent(); !strings.HasSuffix(got, "after 6 healthy probes in a row (doubled for its flaps)") {
		t.Fatalf("readmission event %q", got)
	}
	clock.Advance(30 * time.Second) // past 4 × the 6 s it was out
	h.eng.Exclude("s1", engine.ExcludeUnhealthy, "getHealth: Node is behind by 40 slots")
	if got := lastEvent(); strings.Contains(got, "flapping") {
		t.Fatalf("unhealthy 30 s after a readmission that took 6: %q", got)
	}
	if n := healthyProbes(); n != 3 {
		t.Fatalf("readmission after the flap was forgotten took %d, want 3", n)
	}
}
