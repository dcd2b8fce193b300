package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// An endpoint caught up after lagging is readmitted after probes.recover
// probes in a row within chain.max_head_lag. A probe answered without a
// head in between (an error, a null) breaks the run: the head it had is no
// proof it keeps up, and a node whose head probe fails every other time
// must not be readmitted as if it answered every one.
func TestHeads_AProbeWithoutAHeadRestartsTheRunTowardsReadmission(t *testing.T) {
	r := newHeadRig(t, 2, func(c *engine.Config) { c.Probes.Recover = 3 })
	r.warmUp()
	r.sims[1].SetHeadLag(10)
	r.round()
	if ep := r.endpoint("s1"); !ep.LagExcluded {
		t.Fatalf("10 behind and not excluded: lag %d", ep.Lag)
	}
	r.sims[1].SetHeadLag(0)
	var seen []string
	note := func(what string) {
		ep := r.endpoint("s1")
		seen = append(seen, fmt.Sprintf("%s: excluded %v in sync %d", what, ep.LagExcluded, ep.LagInSync))
	}
	r.round()
	note("head")
	r.round()
	note("head")
	r.clock.Advance(time.Second)
	r.eng.ObserveProbeHead("s0", r.sims[0].Head())
	r.eng.ObserveProbeNoHead("s1", "JSON-RPC error -32603: internal error")
	note("no head")
	r.round()
	note("head")
	r.round()
	note("head")
	r.round()
	note("head")
	got := strings.Join(seen, "; ")
	want := "head: excluded true in sync 1; head: excluded true in sync 2; no head: excluded true in sync 0; " +
		"head: excluded true in sync 1; head: excluded true in sync 2; head: excluded false in sync 0"
	if got != want {
		t.Fatalf("probes after catching up (probes.recover 3):\n got  %s\n want %s", got, want)
	}
	t.Logf("%s", got)
}
