package engine

import (
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// EventType names what happened.
type EventType string

const (
	EventBreaker  EventType = "breaker"  // breaker transitions
	EventDrain    EventType = "drain"    // drain and undrain
	EventFault    EventType = "fault"    // fault injected, cleared, expired
	EventFailover EventType = "failover" // a request moved to another endpoint
	EventBackoff  EventType = "backoff"  // an endpoint answered 429
	EventConfig   EventType = "config"   // live changes (hedge settings)
	EventHedge    EventType = "hedge"    // hedging paused or resumed
	EventHead     EventType = "head"     // lag exclusion and readmission, wrong chain
	EventPool     EventType = "pool"     // independence warnings
	EventRole     EventType = "role"     // an endpoint's role changed (SetRole)
	EventShadow   EventType = "shadow"   // a shadow answered differently (rate-limited per method)
	EventServer   EventType = "server"   // rpcdash's own bounds: answers cut to clients that stopped reading
)

// Event is one entry of the engine's event log.
type Event struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Type     EventType `json:"type"`
	Endpoint string    `json:"endpoint,omitempty"`
	From     string    `json:"from,omitempty"`
	To       string    `json:"to,omitempty"`
	Message  string    `json:"message"`
	// Actor is who caused it: the operator's channel for control actions
	// (console, admin), else the engine.
	Actor Actor `json:"actor"`
}

// eventLog keeps the last capacity events. Failover events are frequent
// under a fault, so consecutive ones for the same endpoint are coalesced by
// the caller's rate limit rather than flooding the log.
type eventLog struct {
	mu     sync.Mutex
	now    func() time.Time
	buf    []Event // event with Seq s sits at (s-1) % len(buf)
	seq    uint64  // the newest event's Seq, 0 before the first
	notify func(Event)
}

// EventCapacity is how many events the log keeps, the newest: a poller
// that finds a gap in seq lost the ones between to it.
const EventCapacity = 2048

func newEventLog(now func() time.Time, notify func(Event)) *eventLog {
	return &eventLog{now: now, buf: make([]Event, EventCapacity), notify: notify}
}

func (l *eventLog) add(ev Event) {
	// Messages quote upstream causes; the log and the console show them.
	ev.Message = redact.Sanitize(ev.Message, redact.MaxShown)
	l.mu.Lock()
	l.seq++
	ev.Seq = l.seq
	if ev.Time.IsZero() {
		ev.Time = l.now()
	}
	if ev.Actor == "" {
		ev.Actor = ActorEngine
	}
	l.buf[(l.seq-1)%uint64(len(l.buf))] = ev
	l.mu.Unlock()
	if l.notify != nil {
		l.notify(ev)
	}
}

// since returns the retained events with Seq > after, oldest first; none
// when after is at or past the newest, up to the top of uint64.
func (l *eventLog) since(after uint64) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after >= l.seq {
		return nil
	}
	oldest := uint64(1)
	if n := uint64(len(l.buf)); l.seq > n {
		oldest = l.seq - n + 1
	}
	var out []Event
	for s := max(after+1, oldest); s <= l.seq; s++ {
		out = append(out, l.buf[(s-1)%uint64(len(l.buf))])
	}
	return out
}
