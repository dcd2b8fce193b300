package engine

import (
	"fmt"
	"time"
)

// noteFailover logs failovers without flooding: one event per endpoint per
// second, carrying how many were folded into it.
func (e *Engine) noteFailover(from *endpoint, cause string) {
	now := e.now()
	e.mu.Lock()
	st := e.failoverLog[from.Name]
	st.count++
	emit := now.Sub(st.last) >= time.Second
	n := st.count
	if emit {
		st.last, st.count, st.cause = now, 0, ""
	} else {
		st.cause = cause
	}
	e.failoverLog[from.Name] = st
	e.mu.Unlock()
	if emit {
		e.events.add(Event{Type: EventFailover, Endpoint: from.Name, Message: failoverMessage(n, cause)})
	}
}

// flushFailovers emits the failovers folded since an endpoint's last event
// once its second has passed. Without it they waited for that endpoint's
// next failover, which may come hours later: the event then counted them
// in with it, under its cause and at its time, and when none came they
// were never told.
func (e *Engine) flushFailovers(now time.Time) {
	var evs []Event
	e.mu.Lock()
	for name, st := range e.failoverLog {
		if st.count == 0 || now.Sub(st.last) < time.Second {
			continue
		}
		evs = append(evs, Event{Type: EventFailover, Endpoint: name, Message: failoverMessage(st.count, st.cause)})
		e.failoverLog[name] = failoverStat{last: now}
	}
	e.mu.Unlock()
	for _, ev := range evs {
		e.events.add(ev)
	}
}

func failoverMessage(n int, cause string) string {
	if n > 1 {
		return fmt.Sprintf("failed over %d times: %s", n, cause)
	}
	return "failed over: " + cause
}

type failoverStat struct {
	last  time.Time
	count int
	cause string // the latest folded failover's
}
