package engine

import (
	"fmt"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// The control API: everything an operator can do with a key or with curl.
// Each call changes explicit state and leaves an event naming who did it.

// Drain stops new traffic to an endpoint; in-flight requests finish. A drain
// lasts until Undrain: it never expires on a timer.
func (e *Engine) Drain(by Actor, name string) error {
	ep, err := e.endpoint(name)
	if err != nil {
		return err
	}
	if ep.drained.Swap(true) {
		return nil
	}
	msg := "drained; " + inFlightFinish(ep.inflight.Load())
	if e.lastResort() == 0 {
		// Allowed (an operator may mean to stop all traffic), but said:
		// the console asks first, a script's curl did not hear it. The
		// others may be drained, on another chain or refusing connections.
		msg += "; no endpoint is left to route to: every request fails until one is undrained"
	}
	e.events.add(Event{Type: EventDrain, Endpoint: name, From: "active", To: "drained", Actor: by, Message: msg})
	e.poolChanged() // a drained endpoint's head is no longer the pool's
	return nil
}

// Undrain resumes traffic to a drained endpoint.
func (e *Engine) Undrain(by Actor, name string) error {
	ep, err := e.endpoint(name)
	if err != nil {
		return err
	}
	if ep.drained.Swap(false) {
		e.events.add(Event{Type: EventDrain, Endpoint: name, From: "drained", To: "active", Actor: by, Message: "undrained"})
		e.poolChanged()
	}
	return nil
}

// InjectFault installs (or replaces) a fault on an endpoint. A fault with a
// duration is cleared when it runs out, by a timer of its own (Snapshot
// only reads).
func (e *Engine) InjectFault(by Actor, name string, spec FaultSpec) error {
	ep, err := e.endpoint(name)
	if err != nil {
		return err
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	now := e.now()
	f := newActiveFault(spec, now)
	if spec.Mode == FaultStale {
		ep.staleHead.Store(ep.head.Load())
	}
	if cur := ep.fault.Load(); cur.running(now) {
		f.from = cur.from // set before f is published: the expiry reads it
	}
	old := ep.fault.Swap(f)
	switch {
	case old == nil:
	case !old.running(now):
		// Run out, its timer not yet fired (which now finds it gone): it
		// ends here, as it would have a moment ago (faultEnded).
		e.faultEnded(ep, old, ActorEngine, "fault expired")
	default:
		old.end()
	}
	e.armFaultExpiry(ep, f)
	msg := fmt.Sprintf("fault injected: %s", spec.Mode)
	from := ""
	if old.running(now) {
		from = string(old.Mode)
	}
	if spec.Rate < 1 {
		msg += fmt.Sprintf(" rate=%.2f", spec.Rate)
	}
	if spec.Mode == FaultLatency {
		msg += " latency=" + spec.Latency.D().String()
	}
	if spec.Duration > 0 {
		msg += " for " + spec.Duration.D().String()
	}
	if from != "" {
		msg += " (replaces the " + from + " fault)"
	}
	e.events.add(Event{Type: EventFault, Endpoint: name, From: from, To: string(spec.Mode), Actor: by, Message: msg})
	return nil
}

// ClearFault removes an endpoint's fault.
func (e *Engine) ClearFault(by Actor, name string) error {
	ep, err := e.endpoint(name)
	if err != nil {
		return err
	}
	if old := ep.fault.Swap(nil); old != nil {
		e.armFaultExpiry(ep, nil)
		e.faultEnded(ep, old, by, "fault cleared")
	}
	return nil
}

// faultEnded undoes what fault f did to ep, now that it is gone, and says
// so. Its breaker forgives the opens since the fault began (ForgiveSince).
// The 429 back-offs an http429 fault caused are lifted: they answered
// no provider's limit, and the operator who cleared the fault expects the
// endpoint back (a 1 m back-off outlived the fault, with no key to end it).
func (e *Engine) faultEnded(ep *endpoint, f *activeFault, by Actor, msg string) {
	f.end()
	ep.faultFrom.Store(f.from.UnixNano())
	ep.faultTo.Store(e.now().UnixNano())
	ep.staleHead.Store(0)
	if f.Mode == FaultStale {
		ep.lagFlaps.forget(e.cfg.Probes.Recover)
	}
	if ep.breaker.ForgiveSince(f.from) {
		msg += fmt.Sprintf("; breaker cooldown back to %s (its opens in the fault were the fault's)", e.cfg.Breaker.Cooldown)
	}
	if f.Mode == Fault429 && ep.liftBackoffs(e.now()) {
		msg += "; its 429 back-offs lifted"
	}
	e.events.add(Event{Type: EventFault, Endpoint: ep.Name, From: string(f.Mode), Actor: by, Message: msg})
}

// SetHedge changes hedging live; it applies to the next request.
func (e *Engine) SetHedge(by Actor, u HedgeUpdate) error {
	if err := e.validateHedgeUpdate(u); err != nil {
		return err
	}
	before := e.hedge.settingsNow()
	msg, err := e.hedge.apply(u)
	if err != nil {
		return err
	}
	msg += e.beginTrials(u, before)
	e.events.add(Event{Type: EventConfig, Actor: by, Message: msg})
	return nil
}

// validateHedgeUpdate checks what hedge.apply does not: that a fixed delay
// could ever fire, and that a method name is one.
func (e *Engine) validateHedgeUpdate(u HedgeUpdate) error {
	if u.Delay != nil {
		d, err := ParseDelay(*u.Delay)
		if err != nil {
			return fmt.Errorf("delay: %v", err)
		}
		limit := e.cfg.Server.RequestTimeout
		if u.Method != "" && isMethodName(u.Method) {
			limit = e.requestTimeout(u.Method)
		}
		if err := checkMethodDelay(d, u.Method, limit, e.cfg.Server.RequestTimeout); err != nil {
			return fmt.Errorf("delay: %v", err)
		}
	}
	if u.Method != "" && !isMethodName(u.Method) {
		return fmt.Errorf("method: %q is not a JSON-RPC method name", redact.Sanitize(u.Method, 64))
	}
	if u.Method != "" {
		// Its settings would be kept and never used.
		return e.notHedged(u.Method)
	}
	return nil
}

// Events returns the retained events with sequence numbers above after.
func (e *Engine) Events(after uint64) []Event { return e.events.since(after) }

// armFaultExpiry replaces the endpoint's expiry timer with one for f (none
// when f is nil or has no duration).
func (e *Engine) armFaultExpiry(ep *endpoint, f *activeFault) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.faultTimer != nil {
		ep.faultTimer.Stop()
		ep.faultTimer = nil
	}
	if f == nil || f.Expires.IsZero() {
		return
	}
	ep.faultTimer = time.AfterFunc(f.Expires.Sub(f.Since), func() { e.expireFault(ep, f) })
}

// expireFault clears f if it is still the endpoint's fault, with an event
// by the engine. The transport does the same when it notices first
// (faultOf); the compare-and-swap lets only one of them report it.
func (e *Engine) expireFault(ep *endpoint, f *activeFault) {
	if ep.fault.CompareAndSwap(f, nil) {
		e.faultEnded(ep, f, ActorEngine, "fault expired")
	}
}

// stopFaultTimers stops every pending expiry (at shutdown).
func (e *Engine) stopFaultTimers() {
	for _, ep := range e.endpoints {
		ep.mu.Lock()
		if ep.faultTimer != nil {
			ep.faultTimer.Stop()
			ep.faultTimer = nil
		}
		ep.mu.Unlock()
	}
}

// faultOf is the endpoint's active fault for the request path; one that has
// run its duration is cleared here, with an event, if its timer has not
// done so yet.
func (e *Engine) faultOf(ep *endpoint) *activeFault {
	f, ended := ep.currentFault(e.now())
	if ended != nil {
		e.faultEnded(ep, ended, ActorEngine, "fault expired")
	}
	return f
}

// faultNow is the endpoint's fault as a reader sees it at now: an expired
// one reads as none, and nothing is changed.
func faultNow(ep *endpoint, now time.Time) *activeFault {
	if f := ep.fault.Load(); f != nil && !f.expired(now) {
		return f
	}
	return nil
}
