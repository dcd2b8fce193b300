package engine

import (
	"sync"
	"time"
)

// paceHistory keeps an endpoint's usual pace (usualLatency) as it was
// every paceEvery over the last paceSpan, so that a pool slowdown is
// judged against the pace before it began, not the one at its first
// excused deadline: tails that pass two endpoints' deadlines together may
// come 20 s into a slowdown, by when the figures read the slowdown (200
// ms for endpoints of 48 ms), and the answers were then never forgotten:
// the auto hedge delay stayed at 210 ms against 65 ms before, the p99 at
// 2.2× for four minutes (aftermath audit, stop 55).
type paceHistory struct {
	mu      sync.Mutex
	samples [paceSamples]paceSample
	next    int
}

type paceSample struct {
	at   time.Time
	pace time.Duration
}

const (
	paceEvery   = 5 * time.Second
	paceSpan    = time.Minute
	paceSamples = int(paceSpan / paceEvery)
)

func (h *paceHistory) add(at time.Time, pace time.Duration) {
	h.mu.Lock()
	h.samples[h.next] = paceSample{at, pace}
	h.next = (h.next + 1) % paceSamples
	h.mu.Unlock()
}

// before is the lowest pace taken within paceSpan before now, and the
// latest time the pace was still near it (the slowdown began after);
// false with none taken.
func (h *paceHistory) before(now time.Time) (pace time.Duration, stillAt time.Time, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.samples {
		if !s.at.IsZero() && now.Sub(s.at) <= paceSpan && (!ok || s.pace < pace) {
			pace, ok = s.pace, true
		}
	}
	for _, s := range h.samples {
		if !s.at.IsZero() && now.Sub(s.at) <= paceSpan && nearPace(pace, s.pace) && s.at.After(stillAt) {
			stillAt = s.at
		}
	}
	return pace, stillAt, ok
}

// notePaces takes each endpoint's usual pace every paceEvery (the watch
// loop runs it).
func (e *Engine) notePaces(now time.Time) {
	if now.Sub(e.pacesAt) < paceEvery {
		return
	}
	e.pacesAt = now
	for _, ep := range e.endpoints {
		if pace, _, _, ok := ep.usualLatency(nil); ok {
			ep.paces.add(now, pace)
		}
	}
}
