package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
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
