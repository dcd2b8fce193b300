package engine

import (
	"sync"
	"time"
)

// RateKind is one tally of a RateWindow. Kinds are independent: whether a
// timeout also counts as a failure is the caller's choice.
type RateKind uint8

const (
	RateAttempts RateKind = iota
	RateSuccess
	RateFailure
	RateTimeout
	Rate429
	RateCancelled
	RateHedge // hedge attempts (per endpoint and method: where hedges go)
	numRateKinds
)

var rateKindNames = [numRateKinds]string{"attempts", "success", "failure", "timeout", "http429", "cancelled", "hedge"}

func (k RateKind) String() string {
	if k < numRateKinds {
		return rateKindNames[k]
	}
	return "RateKind(?)"
}

// RateTotals are a RateWindow's sums. Covered is the time they span: less
// than the window's span while the window is younger than that.
type RateTotals struct {
	Attempts    int64
	Success     int64
	Failure     int64
	Timeout     int64
	RateLimited int64
	Cancelled   int64
	Hedges      int64
	Covered     time.Duration
}

// Get returns the total of one kind.
func (t RateTotals) Get(k RateKind) int64 {
	switch k {
	case RateAttempts:
		return t.Attempts
	case RateSuccess:
		return t.Success
	case RateFailure:
		return t.Failure
	case RateTimeout:
		return t.Timeout
	case Rate429:
		return t.RateLimited
	case RateCancelled:
		return t.Cancelled
	case RateHedge:
		return t.Hedges
	}
	return 0
}

// PerSecond is the rate of one kind over the covered time.
func (t RateTotals) PerSecond(k RateKind) float64 {
	if t.Covered <= 0 {
		return 0
	}
	return float64(t.Get(k)) / t.Covered.Seconds()
}

// RateWindow is a set of rolling counters.
type RateWindow struct {
	mu    sync.Mutex
	now   func() time.Time
	ring  ring
	slots [][numRateKinds]int64
}

// NewRateWindow keeps counts for span in buckets sub-windows (buckets < 1
// means 5). now nil means time.Now.
func NewRateWindow(span time.Duration, buckets int, now func() time.Time) *RateWindow {
	if now == nil {
		now = time.Now
	}
	r := newRing(span, buckets, now())
	return &RateWindow{now: now, ring: r, slots: make([][numRateKinds]int64, r.n)}
}

// Add counts n events of kind; an unknown kind is ignored.
func (r *RateWindow) Add(kind RateKind, n int64) {
	if kind >= numRateKinds {
		return
	}
	t := r.now()
	r.mu.Lock()
	r.rotateLocked(t)
	r.slots[r.ring.slot(r.ring.head)][kind] += n
	r.mu.Unlock()
}

// Count counts one event of each kind given, under one lock (an attempt
// and its outcome, say); unknown kinds are ignored.
func (r *RateWindow) Count(kinds ...RateKind) {
	t := r.now()
	r.mu.Lock()
	r.rotateLocked(t)
	slot := &r.slots[r.ring.slot(r.ring.head)]
	for _, k := range kinds {
		if k < numRateKinds {
			slot[k]++
		}
	}
	r.mu.Unlock()
}

func (r *RateWindow) rotateLocked(t time.Time) {
	from, to := r.ring.advance(t)
	for k := from; k < to; k++ {
		r.slots[r.ring.slot(k)] = [numRateKinds]int64{}
	}
}

// Totals sums each kind over the window.
func (r *RateWindow) Totals() RateTotals {
	t := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotateLocked(t)
	var sum [numRateKinds]int64
	for i := range r.slots {
		for k, v := range r.slots[i] {
			sum[k] += v
		}
	}
	return RateTotals{
		Attempts: sum[RateAttempts], Success: sum[RateSuccess], Failure: sum[RateFailure],
		Timeout: sum[RateTimeout], RateLimited: sum[Rate429], Cancelled: sum[RateCancelled],
		Hedges: sum[RateHedge], Covered: r.ring.covered(t),
	}
}
