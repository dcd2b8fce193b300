package probes

import (
	"sync"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// newSteppedRig is a rig whose probe rounds the test runs itself, one at a
// time, instead of the Runner's loops on a timer: what a test says happens
// "by the next round" is then checked at that round, on a loaded machine
// too. Every endpoint's first round has run when it returns.
func newSteppedRig(t testing.TB, mut func(*engine.Config), sims ...sim.Config) *rig {
	t.Helper()
	r := newUnstartedRig(t, mut, sims...)
	r.eng.UseProbeTrials() // as Start does
	r.firstRound()
	return r
}

// firstRound runs every endpoint's first round at once, as Start does: each
// waits for every first identity probe to end before it takes a head.
func (r *rig) firstRound() {
	var wg sync.WaitGroup
	for _, p := range r.run.probers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.tick(r.run.ctx)
		}()
	}
	wg.Wait()
}

// round runs one round of the named endpoint's probes, as its loop does
// when the round is due.
func (r *rig) round(name string) {
	r.t.Helper()
	for _, p := range r.run.probers {
		if p.name == name {
			if !p.tick(r.run.ctx) {
				r.t.Fatalf("%s's round: the runner is closing", name)
			}
			return
		}
	}
	r.t.Fatalf("no prober for %s", name)
}
