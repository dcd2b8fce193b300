package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Badges that do not fit whole were narrowed from the last one back, each
// in turn, until they fit: seen live "FLT 51s DRN" at 120 columns and
// "FAULT error 45s DRN" at 200 where "FLT 51s DRAINED" and "FLT 45s
// DRAINED" fit, "FLT 2m LAG" where "FLT 2m LAGGING" fits, "FLT 28s BOFF"
// where "FLT 28s BACKOFF" fits. The fewest are narrowed, the least urgent
// first; DRAINED is narrowed only in the narrow layout (80 columns).
func TestView_BadgesNarrowTheFewestThatFit(t *testing.T) {
	fault := func(mode engine.FaultMode, left time.Duration) *engine.FaultInfo {
		return &engine.FaultInfo{Mode: mode, Rate: 1, Duration: 2 * time.Minute, Since: t0.Add(left - 2*time.Minute), Expires: t0.Add(left)}
	}
	for _, c := range []struct {
		name   string
		w, h   int
		set    func(*engine.EndpointSnapshot)
		want   string
		refuse string
	}{
		{"fault and drained", 120, 36, func(ep *engine.EndpointSnapshot) {
			ep.Fault, ep.Drained = fault(engine.FaultError, 51*time.Second), true
		}, "FLT 51s DRAINED", "DRN"},
		{"fault and drained", 200, 50, func(ep *engine.EndpointSnapshot) {
			ep.Fault, ep.Drained = fault(engine.FaultError, 45*time.Second), true
		}, "FLT 45s DRAINED", "DRN"},
		{"fault and lagging", 120, 36, func(ep *engine.EndpointSnapshot) {
			ep.Fault, ep.LagExcluded, ep.Lag = fault(engine.FaultStale, 110*time.Second), true, 9
		}, "FLT 2m LAGGING", "LAG "},
		{"fault and back-off", 120, 36, func(ep *engine.EndpointSnapshot) {
			ep.Fault, ep.BackoffUntil = fault(engine.Fault429, 28*time.Second), t0.Add(4*time.Second)
		}, "FLT 28s BACKOFF", "BOFF"},
		// Room for one narrowed: the least urgent, the fault's mode kept.
		{"fault and lagging", 200, 50, func(ep *engine.EndpointSnapshot) {
			ep.Fault, ep.LagExcluded, ep.Lag = fault(engine.FaultStale, 110*time.Second), true, 9
		}, "FAULT stale 1m50s LAG ", "FLT"},
		// The narrow layout: the narrow forms, DRN among them.
		{"fault and drained", 80, 24, func(ep *engine.EndpointSnapshot) {
			ep.Fault, ep.Drained = fault(engine.FaultError, 51*time.Second), true
		}, "FLT 51s DRN", "+1"},
	} {
		s := healthySnapshot()
		c.set(&s.Endpoints[1]) // infura
		got := lineWith(fixedModel(s, themes.Default(), c.w, c.h).View(), "infura")
		if !strings.Contains(got, c.want) || strings.Contains(got, c.refuse) {
			t.Errorf("%s, %d×%d: %q, want %q (and no %q)", c.name, c.w, c.h, got, c.want, c.refuse)
		}
	}
}
