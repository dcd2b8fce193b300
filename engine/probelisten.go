package engine

import (
	"context"
	"sync"
	"time"
)

// A probe listens on past its hang deadline for a late answer (probe.go),
// and its endpoint's probe loop waits for it. Once the breaker is open the
// next probe is the half-open trial, due when the cooldown ends: a probe
// still listening then is given up, so that it does not hold the trial back
// (it did, by up to a third of server.request_timeout: the trial came that
// long after next_trial_at).

// probeListeners are an endpoint's probes in flight, each with the
// cancellation that gives it up.
type probeListeners struct {
	mu sync.Mutex
	m  map[*attempt]*probeListener
}

type probeListener struct {
	cancel context.CancelFunc
	giveUp *time.Timer // nil until a cooldown's end is set
}

// add registers a's probe and returns what unregisters it. On an endpoint
// already open (a probe that only observes the cooldown) it is given up
// untilTrial from now, when the cooldown ends.
func (l *probeListeners) add(a *attempt, cancel context.CancelFunc, untilTrial time.Duration, open bool) (remove func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = make(map[*attempt]*probeListener)
	}
	pl := &probeListener{cancel: cancel}
	if open {
		pl.giveUp = time.AfterFunc(max(untilTrial, 0), cancel)
	}
	l.m[a] = pl
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if pl.giveUp != nil {
			pl.giveUp.Stop()
		}
		delete(l.m, a)
	}
}

// giveUpAfter gives up the probes in flight once d has passed: the breaker
// opened, and its trial is due then.
func (l *probeListeners) giveUpAfter(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, pl := range l.m {
		if pl.giveUp != nil {
			pl.giveUp.Stop()
		}
		pl.giveUp = time.AfterFunc(max(d, 0), pl.cancel)
	}
}
