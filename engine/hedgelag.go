package engine

import (
	"sync/atomic"
	"time"
)

// A hedge goes out a little after its delay: its timer fires late and the
// request's loop has to be scheduled to send it, a fraction of a
// millisecond idle and milliseconds on a busy host. At a delay on the
// steep part of the latency curve that moves the fire rate: with the
// seeds' 50 ms median, 60 ms and 1.9 ms late, 0.335 predicted against
// 0.298 measured. The forecast sends its duplicates as late as hedges
// have gone out lately.

// lagWeight is the weight of the newest observation in the mean: about
// the last hundred hedges.
const lagWeight = 1.0 / 64

// hedgeLag is the exponentially weighted mean of how late hedges went out
// (their start less the primary's, less the delay).
type hedgeLag struct {
	ns   atomic.Int64
	seen atomic.Bool
}

func (l *hedgeLag) observe(late time.Duration) {
	if l.seen.CompareAndSwap(false, true) {
		l.ns.Store(int64(late))
		return
	}
	for {
		old := l.ns.Load()
		next := old + int64(lagWeight*float64(int64(late)-old))
		if l.ns.CompareAndSwap(old, next) {
			return
		}
	}
}

// mean is the lag to model, 0 before any hedge went out; to the
// microsecond, so that the forecast's figures read as its steps do.
func (l *hedgeLag) mean() time.Duration {
	return time.Duration(max(l.ns.Load(), 0)).Round(time.Microsecond)
}

// noteHedgeLag records how late the hedge just launched went out, when it
// is the first of a request sent by the timer; a clock that did not move
// (a test's) or a lag past the delay (a stall, counted apart) tells
// nothing.
func (x *execution) noteHedgeLag(delay time.Duration) {
	if x.hedges != 1 || len(x.live) < 2 {
		return
	}
	hedge := x.live[len(x.live)-1]
	for _, a := range x.live {
		if a.role != rolePrimary {
			continue
		}
		if late := hedge.start.Sub(a.start) - delay; late >= 0 && late < max(delay, stallSlack) {
			x.e.hedge.lag.observe(late)
		}
		return
	}
}
