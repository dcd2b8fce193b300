package engine

import (
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// The console's "last minute" of client traffic: what clients of the RPC
// port saw (one observation per request, failover and hedging included),
// for the pool and per method. Kept apart from the stats window
// (server.stats_window), which is the routing and hedging memory.
const (
	recentSpan    = time.Minute
	recentBuckets = 12
	// recentRateWidths: req/s is over the last two sub-windows (10 s), not
	// the minute: "did traffic stop?" is the first thing an operator reads
	// it for, and over the minute it read 16 req/s 11 s after a 20/s load
	// stopped, and 4.3 req/s 12 s after it came back.
	recentRateWidths = 2
)

// ClientStats is client-side latency and throughput over the last minute.
//
// The hedging figures are over the same minute, not since start as the
// accounting's: after hedging was turned off or its delay raised, the
// since-start fire rate kept reading what it was for as long as the
// engine had run before, beside this minute's latencies.
type ClientStats struct {
	Requests  int64   // requests answered or failed in the window
	Errors    int64   // of which got rpcdash's own error
	Gone      int64   // of which ended unanswered because their client went away (clientoutcome.go)
	PerSecond float64 // requests per second over the last 10 s (recentRateWidths)
	// The latency of the requests answered (an endpoint's JSON-RPC error,
	// a revert, is an answer); 0 when none was. Errors are not in it.
	P50 time.Duration
	P95 time.Duration
	P99 time.Duration
	// Counted when they happen: hedges fired, hedges that answered first.
	HedgesFired int64
	HedgesWon   int64
	// Upstream is the attempts (every role) of the window's requests,
	// counted with each request when it ends.
	Upstream      int64
	FireRate      float64 // HedgesFired ÷ Requests
	WinRate       float64 // HedgesWon ÷ HedgesFired
	Amplification float64 // Upstream ÷ Requests
}

type recentWindow struct {
	// latency is of the requests answered. rpcdash's own errors are
	// counted apart (Errors): when every endpoint fails at once they come
	// back in a millisecond, and counted in they made the percentiles
	// look better the worse things went.
	latency *window.Latency
	rates   *window.Rates // RateAttempts per request, RateFailure per error
}

// newRecentWindow counts its sub-windows from epoch, the pool window's
// start: a method's window made when the method first came then ages out
// with the pool's, so that its last minute is the pool's last minute (the
// methods' requests add up to the pool's, and their rates are over the
// same time: the method had none before it was first seen).
func newRecentWindow(now func() time.Time, epoch time.Time) *recentWindow {
	return &recentWindow{latency: window.NewLatencyFrom(recentSpan, recentBuckets, now, epoch),
		rates: window.NewRatesFrom(recentSpan, recentBuckets, now, epoch)}
}

// observe counts n requests that ended so after d. A request whose
// client went away is counted under window.Cancelled.
func (w *recentWindow) observe(d time.Duration, out clientOutcome, n int64) {
	switch out {
	case clientAnswered:
		w.latency.RecordN(d, n)
		w.rates.CountN(n, window.Attempts)
	case clientGone:
		w.rates.CountN(n, window.Attempts, window.Cancelled)
	default:
		w.rates.CountN(n, window.Attempts, window.Failure)
	}
}

func (w *recentWindow) stats() ClientStats {
	t := w.rates.Totals()
	s := w.latency.Summary()
	c := ClientStats{Requests: t.Attempts, Errors: t.Failure, Gone: t.Cancelled, PerSecond: w.rates.PerSecond(window.Attempts, recentRateWidths), P50: s.P50, P95: s.P95, P99: s.P99,
		HedgesFired: t.Hedges, HedgesWon: t.HedgesWon, Upstream: t.Upstream}
	if c.Requests > 0 {
		c.FireRate = float64(c.HedgesFired) / float64(c.Requests)
		c.Amplification = float64(c.Upstream) / float64(c.Requests)
	}
	if c.HedgesFired > 0 {
		c.WinRate = float64(c.HedgesWon) / float64(c.HedgesFired)
	}
	return c
}

// recentTraffic holds the pool's window and one per method (keyed by the
// accounting labels).
type recentTraffic struct {
	pool    *recentWindow
	methods *perMethod[*recentWindow]
}

func newRecentTraffic(now func() time.Time) *recentTraffic {
	epoch := now()
	return &recentTraffic{pool: newRecentWindow(now, epoch),
		methods: newPerMethod(true, func(string) *recentWindow { return newRecentWindow(now, epoch) })}
}

// observe records n client requests of method that took d each.
func (r *recentTraffic) observe(method string, d time.Duration, out clientOutcome, n int64) {
	r.pool.observe(d, out, n)
	r.method(method).observe(d, out, n)
}

// count counts n events of kind (window.Hedge, window.HedgeWon,
// window.Upstream) of method, its accounting label.
func (r *recentTraffic) count(method string, kind window.Kind, n int64) {
	r.pool.rates.Add(kind, n)
	r.method(method).rates.Add(kind, n)
}

func (r *recentTraffic) method(m string) *recentWindow {
	w, _ := r.methods.get(m)
	return w
}

// methodStats is the method's last minute; zero for a method not seen.
func (r *recentTraffic) methodStats(m string) ClientStats {
	w, ok := r.methods.lookup(m)
	if !ok {
		return ClientStats{}
	}
	return w.stats()
}
