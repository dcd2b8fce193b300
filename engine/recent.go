package engine

import (
	"sync"
	"time"
)

// The console's "last minute" of client traffic: what clients of the RPC
// port saw (one observation per request, failover and hedging included),
// for the pool and per method. Kept apart from the stats window
// (server.stats_window), which is the routing and hedging memory.
const (
	recentSpan    = time.Minute
	recentBuckets = 12
)

// ClientStats is client-side latency and throughput over the last minute.
type ClientStats struct {
	Requests  int64   // requests answered or failed in the window
	Errors    int64   // of which got rpcdash's own error
	PerSecond float64 // Requests over the time the window covers
	P50       time.Duration
	P95       time.Duration
	P99       time.Duration
}

type recentWindow struct {
	latency *LatencyWindow // every request, successful or not: the client waited for both
	rates   *RateWindow    // RateAttempts per request, RateFailure per error
}

func newRecentWindow(now func() time.Time) *recentWindow {
	return &recentWindow{latency: NewLatencyWindow(recentSpan, recentBuckets, now), rates: NewRateWindow(recentSpan, recentBuckets, now)}
}

func (w *recentWindow) observe(d time.Duration, ok bool) {
	w.latency.Record(d)
	if ok {
		w.rates.Count(RateAttempts)
	} else {
		w.rates.Count(RateAttempts, RateFailure)
	}
}

func (w *recentWindow) stats() ClientStats {
	t := w.rates.Totals()
	s := w.latency.Summary()
	// Over at least a second: a window a few milliseconds old would turn a
	// handful of requests into a huge rate.
	per := float64(t.Attempts) / max(t.Covered, time.Second).Seconds()
	return ClientStats{Requests: t.Attempts, Errors: t.Failure, PerSecond: per, P50: s.P50, P95: s.P95, P99: s.P99}
}

// recentTraffic holds the pool's window and one per method. Method keys are
// the accounting labels, so they are bounded by maxTrackedMethods.
type recentTraffic struct {
	now     func() time.Time
	pool    *recentWindow
	mu      sync.RWMutex
	methods map[string]*recentWindow
}

func newRecentTraffic(now func() time.Time) *recentTraffic {
	return &recentTraffic{now: now, pool: newRecentWindow(now), methods: map[string]*recentWindow{}}
}

// observe records one client request of method that took d.
func (r *recentTraffic) observe(method string, d time.Duration, ok bool) {
	r.pool.observe(d, ok)
	r.method(method).observe(d, ok)
}

func (r *recentTraffic) method(m string) *recentWindow {
	r.mu.RLock()
	w := r.methods[m]
	r.mu.RUnlock()
	if w != nil {
		return w
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if w = r.methods[m]; w == nil {
		w = newRecentWindow(r.now)
		r.methods[m] = w
	}
	return w
}

// methodStats is the method's last minute; zero for a method not seen.
func (r *recentTraffic) methodStats(m string) ClientStats {
	r.mu.RLock()
	w := r.methods[m]
	r.mu.RUnlock()
	if w == nil {
		return ClientStats{}
	}
	return w.stats()
}
