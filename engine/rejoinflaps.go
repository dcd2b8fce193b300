package engine

import (
	"fmt"
	"sync"
	"time"
)

// Lag exclusion's flap damping. Readmission after lag already waits for
// probes.recover probes in a row within chain.max_head_lag, but an
// endpoint hovering at the mark (8 behind, then in sync, every few
// seconds) went out and back in on every swing: at 1 s probes, 24
// lagging/readmitted events a minute, and each readmission handed the
// tip's reads to a node about to fall behind again. The failover seed:
// when traffic oscillates between endpoints, add recovery hysteresis.
//
// As the breaker does for its opens (Envoy multiplies an ejection's
// time): lagging again within four times the stretch it was last out is a
// flap, and its next readmission needs twice the in-sync probes the last
// one did, up to a breaker.max_cooldown's worth of probes.interval (never
// fewer than probes.recover). Lagging again later forgets. A stale fault's
// exclusions are the fault's, not the endpoint's: they neither count as a
// flap nor leave a doubled count behind once the fault ends.

// lagFlaps is one endpoint's record of its lag exclusions.
type lagFlaps struct {
	mu       sync.Mutex
	outAt    time.Time // when its last exclusion began
	inAt     time.Time // when it was last readmitted (zero: never)
	need     int64     // in-sync probes its readmission needs now (0: probes.recover)
	flaps    int64     // exclusions in a row that came that soon after a readmission
	lastNeed int64     // what the last readmission took
	// byFault: the stretch out now began under a stale fault, or a stale
	// fault ended in it; its readmission starts no flap window.
	byFault bool
}

// lagNeedCap is the most in-sync probes a readmission can be made to wait
// for: a breaker.max_cooldown's worth of probes.
func (e *Engine) lagNeedCap() int64 {
	recover := int64(e.cfg.Probes.Recover)
	if iv := e.cfg.Probes.Interval; iv > 0 {
		if n := int64(e.cfg.Breaker.MaxCooldown / iv); n > recover {
			return n
		}
	}
	return recover
}

// lagOut records that ep was excluded for lag now; stale says a stale fault
// runs on it. It returns what the exclusion's event adds ("" unless a
// flap).
func (e *Engine) lagOut(ep *endpoint, now time.Time, stale bool) string {
	f := &ep.lagFlaps
	f.mu.Lock()
	defer f.mu.Unlock()
	recover := int64(e.cfg.Probes.Recover)
	served := f.inAt.Sub(f.outAt)
	soon := !f.inAt.IsZero() && now.Sub(f.inAt) < 4*served
	f.outAt, f.byFault = now, stale
	if stale || !soon {
		f.need, f.flaps = recover, 0
		return ""
	}
	f.flaps++
	f.need = min(2*max(f.lastNeed, recover), e.lagNeedCap())
	return fmt.Sprintf("; lagging again %s after it was readmitted, within 4 × the %s it was out (flapping): it is readmitted after %d in-sync probes in a row",
		shortDuration(now.Sub(f.inAt)), shortDuration(served), f.need)
}

// lagNeed is how many in-sync probes in a row ep's readmission needs now.
func (e *Engine) lagNeed(ep *endpoint) int64 {
	f := &ep.lagFlaps
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.need > 0 {
		return f.need
	}
	return int64(e.cfg.Probes.Recover)
}

// lagIn records that ep was readmitted now after need probes.
func (ep *endpoint) lagIn(now time.Time, need int64) {
	f := &ep.lagFlaps
	f.mu.Lock()
	f.inAt, f.lastNeed = now, need
	if f.byFault {
		f.inAt, f.byFault = time.Time{}, false
	}
	f.mu.Unlock()
}

// lagFlapCount is how many exclusions in a row were flaps.
func (ep *endpoint) lagFlapCount() int64 {
	f := &ep.lagFlaps
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flaps
}

// forgetLagFlaps is a stale fault's end: the exclusions it caused were the
// fault's, and the count its readmission needs goes back to probes.recover.
func (e *Engine) forgetLagFlaps(ep *endpoint) {
	f := &ep.lagFlaps
	f.mu.Lock()
	f.need, f.flaps, f.lastNeed = int64(e.cfg.Probes.Recover), 0, 0
	f.inAt, f.byFault = time.Time{}, true
	f.mu.Unlock()
}
