package engine

import (
	"fmt"
	"sync"
	"time"
)

// Flap damping for the exclusions that probes lift: lag, and a node that
// reports itself unhealthy (Solana getHealth). Readmission already waits
// for probes.recover good probes in a row, but an endpoint hovering at the
// mark (8 behind, then in sync, every few seconds) went out and back in on
// every swing: at 1 s probes, 24 lagging/readmitted events a minute, and
// each readmission handed the tip's reads to a node about to fall behind
// again. The failover seed: when traffic oscillates between endpoints,
// add recovery hysteresis.
//
// As the breaker does for its opens (Envoy multiplies an ejection's
// time): excluded again within four times the stretch it was last out is a
// flap, and its next readmission needs twice the good probes the last one
// did, up to a breaker.max_cooldown's worth of probes.interval (never fewer
// than probes.recover). Excluded again later forgets. A stale fault's lag
// exclusions are the fault's, not the endpoint's: they neither count as a
// flap nor leave a doubled count behind once the fault ends.

// rejoinFlaps is one endpoint's record of one kind of exclusion.
type rejoinFlaps struct {
	mu       sync.Mutex
	outAt    time.Time // when its last exclusion began
	inAt     time.Time // when it was last readmitted (zero: never)
	need     int64     // good probes its readmission needs now (0: probes.recover)
	flaps    int64     // exclusions in a row that came that soon after a readmission
	lastNeed int64     // what the last readmission took
	// byFault: the stretch out now began under a fault, or a fault ended
	// in it; its readmission starts no flap window.
	byFault bool
}

// rejoinCap is the most good probes a readmission can be made to wait
// for: a breaker.max_cooldown's worth of probes.
func (e *Engine) rejoinCap() int64 {
	recover := int64(e.cfg.Probes.Recover)
	if iv := e.cfg.Probes.Interval; iv > 0 {
		if n := int64(e.cfg.Breaker.MaxCooldown / iv); n > recover {
			return n
		}
	}
	return recover
}

// out records an exclusion beginning now; excused says a fault caused it.
// It returns what the exclusion's event adds ("" unless a flap): "; <what>
// again 1.9s after it was readmitted, within 4 × the 7s it was out
// (flapping): it is readmitted after 6 <probes> in a row".
func (f *rejoinFlaps) out(e *Engine, now time.Time, excused bool, what, probes string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	recover := int64(e.cfg.Probes.Recover)
	served := f.inAt.Sub(f.outAt)
	soon := !f.inAt.IsZero() && now.Sub(f.inAt) < 4*served
	f.outAt, f.byFault = now, excused
	if excused || !soon {
		f.need, f.flaps = recover, 0
		return ""
	}
	f.flaps++
	f.need = min(2*max(f.lastNeed, recover), e.rejoinCap())
	return fmt.Sprintf("; %s again %s after it was readmitted, within 4 × the %s it was out (flapping): it is readmitted after %d %s in a row",
		what, roundShown(now.Sub(f.inAt)), roundShown(served), f.need, probes)
}

// needNow is how many good probes in a row the readmission needs now.
func (f *rejoinFlaps) needNow(recover int) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.need > 0 {
		return f.need
	}
	return int64(recover)
}

// in records a readmission now after need good probes.
func (f *rejoinFlaps) in(now time.Time, need int64) {
	f.mu.Lock()
	f.inAt, f.lastNeed = now, need
	if f.byFault {
		f.inAt, f.byFault = time.Time{}, false
	}
	f.mu.Unlock()
}

// count is how many exclusions in a row were flaps.
func (f *rejoinFlaps) count() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flaps
}

// forget is a fault's end: the exclusions it caused were the fault's, and
// the count the readmission needs goes back to probes.recover.
func (f *rejoinFlaps) forget(recover int) {
	f.mu.Lock()
	f.need, f.flaps, f.lastNeed = int64(recover), 0, 0
	f.inAt, f.byFault = time.Time{}, true
	f.mu.Unlock()
}
