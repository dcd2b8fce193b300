package engine

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// Panic routing, as Envoy's healthy_panic_threshold: when fewer than
// router.panic_threshold of the pool's endpoints are routable, the router
// stops trusting its own exclusions (breakers, back-offs, lag, health) and
// routes across every endpoint of the pool, the routable ones first and the
// rest least bad first, rather than piling everything on the few left or
// refusing requests. The pool here is the endpoints not drained by an
// operator and not on the wrong chain: those are out by decision or by
// proof, and panic never routes to them, nor to an endpoint that refuses
// connections. Panic is entered at once and left only after the routable
// share has stayed at or above the threshold for panicHold.

const panicHold = time.Second

type panicState struct {
	active  atomic.Bool // on, readable without the lock
	mu      sync.Mutex
	on      bool
	why     string
	okSince time.Time // while panicking: since when the share has been good
	// The reason at the fewest routable of the episode in progress or the
	// last one: a console refreshing once a second may see a short panic
	// only as it recovers ("routable again").
	worst    string
	worstFew int
}

// poolRoutable counts the pool (non-drained endpoints on the right chain)
// and the routable endpoints in it, as the Snapshot reports them, and the
// primaries the standby decision reads. Standbys are in the pool only while
// the primaries call for them (standby.go).
func (e *Engine) poolRoutable(now time.Time) (routable, pool int, p primaryCount) {
	var standbyRoutable, standbys int
	for _, ep := range e.endpoints {
		if !ep.answersClients() {
			continue
		}
		ok := e.routable(ep, now)
		if ep.standbyLike() {
			standbys++
			if ok {
				standbyRoutable++
			}
			continue
		}
		p.pool++
		if ok {
			routable++
			if ep.breaker.State() == breaker.Closed && !e.heldClosedByCap(ep, now) {
				p.ready++
			}
		}
	}
	pool = p.pool
	if standbys > 0 && e.needsStandby(p) {
		routable, pool = routable+standbyRoutable, pool+standbys
	}
	return routable, pool, p
}

// lastResort counts the endpoints panic routing may still send a read to:
// not drained, not on the wrong chain, not refusing connections.
func (e *Engine) lastResort() int {
	n := 0
	for _, ep := range e.endpoints {
		if !ep.refusing.Load() && ep.answersClients() {
			n++
		}
	}
	return n
}

// decidePanic is setPanic for a count of the pool just taken (rank's, the
// upkeep's), taken again first when it would enter panic routing: a count
// reads the endpoints one at a time, and two changing at once (one coming
// back as another goes out) can be read as both out, a share the pool
// never had. Entered on such a count, panic routing held for panicHold
// past the next good count. Entering is rare: the second count costs the
// request path nothing otherwise.
func (e *Engine) decidePanic(routable, pool int, now time.Time) bool {
	if !e.panicked.active.Load() && e.belowPanic(routable, pool) {
		routable, pool, _ = e.poolRoutable(now)
	}
	return e.setPanic(routable, pool, now)
}

// belowPanic says whether routable of pool is below router.panic_threshold.
func (e *Engine) belowPanic(routable, pool int) bool {
	return pool > 0 && float64(routable) < e.cfg.Router.PanicThreshold*float64(pool)
}

func (e *Engine) setPanic(routable, pool int, now time.Time) bool {
	th := e.cfg.Router.PanicThreshold
	below := e.belowPanic(routable, pool)
	p := &e.panicked
	if !below && !p.active.Load() {
		return false // the common case, without the lock
	}
	// Counted before the lock (it reads each endpoint's own state).
	left := e.leftOutOfPool(pool)
	p.mu.Lock()
	var ev *Event
	why := func() string {
		return fmt.Sprintf("%s routable%s, below router.panic_threshold %.2f", ofEndpoints(routable, pool), left, th)
	}
	switch {
	case below && !p.on:
		p.on, p.okSince, p.why = true, time.Time{}, why()
		p.worst, p.worstFew = p.why, routable
		ev = &Event{Type: EventPool, From: "normal", To: "panic",
			Message: "panic routing: " + p.why + "; requests go to every endpoint not drained, refusing or on the wrong chain, least bad first"}
	case below:
		// The reason is shown as the state now: it follows the count.
		p.okSince, p.why = time.Time{}, why()
		if routable < p.worstFew {
			p.worst, p.worstFew = p.why, routable
		}
	case p.on && p.okSince.IsZero():
		p.okSince, p.why = now, recovering(routable, pool, left, th)
	case p.on && now.Sub(p.okSince) >= panicHold:
		p.on, p.why = false, ""
		ev = &Event{Type: EventPool, From: "panic", To: "normal",
			Message: fmt.Sprintf("panic routing over: %s routable%s for %s", ofEndpoints(routable, pool), left, panicHold)}
	case p.on:
		p.why = recovering(routable, pool, left, th)
	}
	on := p.on
	p.active.Store(on)
	p.mu.Unlock()
	if ev != nil {
		e.events.add(*ev)
	}
	return on
}

// recovering is the panic reason while the share is good again but panic
// routing holds on for panicHold.
func recovering(routable, pool int, left string, th float64) string {
	return fmt.Sprintf("%s routable again%s, at or above router.panic_threshold %.2f; panic routing ends after %s of it", ofEndpoints(routable, pool), left, th, panicHold)
}

// leftOutOfPool names the endpoints that may answer clients (every one but
// the shadows: what the console's header and rpcdash status count, "1/3
// routable") which the pool of pool endpoints leaves out: " (1 drained not
// counted)", empty when it leaves none out. Without it the panic banner's
// "1 of 2 endpoints routable" stood under the header's "1/3 routable", one
// endpoint drained: both true, on one screen a contradiction.
func (e *Engine) leftOutOfPool(pool int) string {
	var serving, drained, wrongChain, standbys, canaries int
	for _, ep := range e.endpoints {
		if !ep.isShadow() {
			serving++
		}
		switch {
		case ep.isShadow():
		case ep.drained.Load():
			drained++
		case ep.excluded(ExcludeWrongChain):
			wrongChain++
		case ep.roleState().role == RoleStandby:
			standbys++
		case ep.roleState().role == RoleCanary:
			canaries++
		}
	}
	// Standbys and canaries are in the pool while the primaries call for
	// them (poolRoutable): then it leaves out only the drained and those
	// on the wrong chain.
	if serving-pool == drained+wrongChain {
		standbys, canaries = 0, 0
	}
	var parts []string
	if drained > 0 {
		parts = append(parts, fmt.Sprintf("%d drained", drained))
	}
	if wrongChain > 0 {
		parts = append(parts, fmt.Sprintf("%d on the wrong chain", wrongChain))
	}
	if standbys > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", standbys, Plural(standbys, "standby", "standbys")))
	}
	if canaries > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", canaries, Plural(canaries, "canary", "canaries")))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + " not counted)"
}

func (e *Engine) panicInfo() (on bool, why, worst string) {
	p := &e.panicked
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.on, p.why, p.worst
}
