package engine

import (
	"fmt"
	"time"
)

// Failovers are logged without flooding: one event per endpoint per
// failoverFold, carrying how many were folded into it. Failovers from an
// endpoint that cannot serve the method (a method not found, not
// supported) are folded apart, one event per endpoint per
// cannotServeFold: a client sending names no endpoint knows makes one
// such failover per call, and at one event a second they pushed the
// breaker, fault and drain events out of the event log within minutes
// (a soak: 1718 of 1888 events).
const (
	failoverFold    = time.Second
	cannotServeFold = time.Minute
)

// failoverKey is an endpoint's fold, cannot-serve failovers apart.
type failoverKey struct {
	endpoint    string
	cannotServe bool
}

// fold is how long the key's failovers fold into one event.
func (k failoverKey) fold() time.Duration {
	if k.cannotServe {
		return cannotServeFold
	}
	return failoverFold
}

type failoverStat struct {
	last  time.Time
	count int
	cause string // the latest folded failover's
}

// noteFailover logs a failover from an endpoint after its attempt failed
// for cause; cannotServe says the endpoint does not serve the method.
func (e *Engine) noteFailover(from *endpoint, cause string, cannotServe bool) {
	key := failoverKey{from.Name, cannotServe}
	now := e.now()
	e.mu.Lock()
	st := e.failoverLog[key]
	st.count++
	emit := now.Sub(st.last) >= key.fold()
	n := st.count
	if emit {
		st.last, st.count, st.cause = now, 0, ""
	} else {
		st.cause = cause
	}
	e.failoverLog[key] = st
	e.mu.Unlock()
	if emit {
		e.events.add(Event{Type: EventFailover, Endpoint: from.Name, Message: failoverMessage(n, cause, key.cannotServe)})
	}
}

// flushFailovers emits the failovers folded since an endpoint's last event
// once its fold has passed. Without it they waited for that endpoint's
// next failover, which may come hours later: the event then counted them
// in with it, under its cause and at its time, and when none came they
// were never told.
func (e *Engine) flushFailovers(now time.Time) {
	var evs []Event
	e.mu.Lock()
	for key, st := range e.failoverLog {
		if st.count == 0 || now.Sub(st.last) < key.fold() {
			continue
		}
		evs = append(evs, Event{Type: EventFailover, Endpoint: key.endpoint, Message: failoverMessage(st.count, st.cause, key.cannotServe)})
		e.failoverLog[key] = failoverStat{last: now}
	}
	e.mu.Unlock()
	for _, ev := range evs {
		e.events.add(ev)
	}
}

func failoverMessage(n int, cause string, cannotServe bool) string {
	switch {
	case n > 1 && cannotServe:
		return fmt.Sprintf("failed over %d times in a minute, the method not served there; the latest: %s", n, cause)
	case n > 1:
		return fmt.Sprintf("failed over %d times: %s", n, cause)
	}
	return "failed over: " + cause
}
