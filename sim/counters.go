package sim

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// Counters is what an upstream has seen since start or the last reset.
type Counters struct {
	Total     int64            `json:"total"`     // JSON-RPC requests (each batch element counts once)
	HTTP      int64            `json:"http"`      // HTTP requests
	ByMethod  map[string]int64 `json:"by_method"` // JSON-RPC requests per method
	ByStatus  map[int]int64    `json:"by_status"` // HTTP status answered; hung requests are not counted
	Cancelled int64            `json:"cancelled"` // client went away before the answer was written
	InFlight  int64            `json:"in_flight"` // HTTP requests being handled now
	Hanging   int64            `json:"hanging"`   // of those, held by hang mode now

	// CancelledCalls are the JSON-RPC requests the cancelled HTTP requests
	// carried (each batch element counts once, as in Total).
	CancelledCalls int64 `json:"cancelled_calls"`

	// CancelledSeconds is the upstream time used by requests whose client
	// went away during their service time (hedge losers, timeouts).
	CancelledSeconds float64 `json:"cancelled_seconds"`
	// Queued requests waited for Capacity, QueueSeconds in all.
	Queued       int64   `json:"queued"`
	QueueSeconds float64 `json:"queue_seconds"`
	// Tails are answers given a tail time; IncidentTails of them began in a
	// shared incident window, IncidentWindows lists those windows (their
	// numbers on the incident clock, the newest 256).
	Tails           int64   `json:"tails"`
	IncidentTails   int64   `json:"incident_tails"`
	IncidentWindows []int64 `json:"incident_windows,omitempty"`
}

// counterState is updated under one mutex so that every snapshot is
// consistent; wake is created only while someone waits, so counting does
// not allocate when nobody is watching.
type counterState struct {
	mu   sync.Mutex
	c    Counters
	wake chan struct{}
}

func newCounterState() counterState {
	return counterState{c: Counters{ByMethod: map[string]int64{}, ByStatus: map[int]int64{}}}
}

func (s *counterState) change(f func(*Counters)) {
	s.mu.Lock()
	f(&s.c)
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
	s.mu.Unlock()
}

func (c Counters) clone() Counters {
	c.ByMethod = maps.Clone(c.ByMethod)
	c.ByStatus = maps.Clone(c.ByStatus)
	c.IncidentWindows = slices.Clone(c.IncidentWindows)
	return c
}

// Counters returns a deep copy of the counters.
func (u *Upstream) Counters() Counters {
	s := &u.counters
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.clone()
}

// ResetCounters zeroes the counters except InFlight, which keeps tracking
// the requests still being handled.
func (u *Upstream) ResetCounters() {
	u.counters.change(func(c *Counters) {
		*c = Counters{ByMethod: map[string]int64{}, ByStatus: map[int]int64{}, InFlight: c.InFlight, Hanging: c.Hanging}
	})
}

// WaitFor blocks until cond holds for the counters or ctx is done. It is
// woken on every counter change; cond gets a deep copy.
func (u *Upstream) WaitFor(ctx context.Context, cond func(Counters) bool) error {
	s := &u.counters
	for {
		s.mu.Lock()
		c := s.c.clone()
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		wake := s.wake
		s.mu.Unlock()
		if cond(c) {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitCancelled blocks until at least n requests were cancelled by their
// clients, or ctx is done.
func (u *Upstream) WaitCancelled(ctx context.Context, n int64) error {
	return u.WaitFor(ctx, func(c Counters) bool { return c.Cancelled >= n })
}

// MethodCount is the number of requests of method that have arrived.
func (u *Upstream) MethodCount(method string) int64 {
	s := &u.counters
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.ByMethod[method]
}

// WaitMethod blocks until at least n requests of method have arrived, or ctx
// is done.
func (u *Upstream) WaitMethod(ctx context.Context, method string, n int64) error {
	return u.WaitFor(ctx, func(c Counters) bool { return c.ByMethod[method] >= n })
}

// WaitIdle blocks until no HTTP request is in flight, or ctx is done.
func (u *Upstream) WaitIdle(ctx context.Context) error {
	return u.WaitFor(ctx, func(c Counters) bool { return c.InFlight == 0 })
}

func (u *Upstream) countArrival(reqs []request) {
	u.counters.change(func(c *Counters) {
		c.HTTP++
		c.InFlight++
		c.Total += int64(len(reqs))
		for _, r := range reqs {
			if r.Method != "" {
				c.ByMethod[r.Method]++
			}
		}
	})
}

func (u *Upstream) countStatus(code int) {
	u.counters.change(func(c *Counters) { c.ByStatus[code]++ })
}

// countCancelled counts an HTTP request whose client went away, carrying
// calls JSON-RPC requests.
func (u *Upstream) countCancelled(calls int) {
	u.counters.change(func(c *Counters) {
		c.Cancelled++
		c.CancelledCalls += int64(calls)
	})
}

func (u *Upstream) countCancelledTime(d time.Duration) {
	u.counters.change(func(c *Counters) { c.CancelledSeconds += d.Seconds() })
}

func (u *Upstream) countDeparture() {
	u.counters.change(func(c *Counters) { c.InFlight-- })
}
