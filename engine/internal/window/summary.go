package window

import "time"

// Summary describes a latency window.
type Summary struct {
	Count    int64 // exact observations
	Censored int64 // observations known only as "longer than"
	// The percentiles count the censored observations (Kaplan–Meier, as
	// QuantileCensored); Open marks those censoring leaves lower bounds,
	// in the order P50, P90, P95, P99, P999 (see SummaryQuantiles).
	P50  time.Duration
	P90  time.Duration
	P95  time.Duration
	P99  time.Duration
	P999 time.Duration
	Open [5]bool
	Max  time.Duration // the slowest answer
	Mean time.Duration // of the answers
}

// SummaryQuantiles are the quantiles a Summary reports, in Open's order.
var SummaryQuantiles = [5]float64{0.50, 0.90, 0.95, 0.99, 0.999}

// Summary describes the window's observations: with no censored ones, the
// percentiles of the answers, which is what Quantile returns.
func (w *Latency) Summary() Summary { return w.SummaryWith(nil) }

// SummaryWith is Summary with extra exact observations counted in: answers
// a caller keeps out of the window for a while (what the window steers must
// not see them yet) but that a display must not hide. With extra ones it
// copies the window's histogram, so it is for views, not for every request.
func (w *Latency) SummaryWith(extra []time.Duration) Summary {
	w.lockCurrent()
	defer w.mu.Unlock()
	h := w.exact
	if len(extra) > 0 {
		if h == nil {
			h = newLatencyHistogram()
		} else {
			h = h.Clone()
		}
		for _, d := range extra {
			_ = h.RecordValue(toMicros(d))
		}
	}
	s := Summary{Count: total(h), Censored: total(w.cens)}
	if s.Count == 0 {
		return s
	}
	s.Max = fromMicros(h.Max())
	s.Mean = time.Duration(h.Mean() * float64(time.Microsecond))
	var vals [5]time.Duration
	if s.Censored == 0 {
		for i, q := range SummaryQuantiles {
			vals[i] = fromMicros(h.ValueAtPercentile(q * 100))
		}
	} else {
		// Dropping the censored ones would bias the tail low, exactly the
		// slow attempts being the ones cut short (a primary its hedge
		// outran). Censoring leaves a quantile open (a lower bound) where
		// the curve ends above 1 − q or censoring dominates it first: the
		// horizon the hedge delay and the forecast stop at too.
		w.productLimitLocked(h, SummaryQuantiles[:], vals[:], s.Open[:], kmHorizon)
	}
	s.P50, s.P90, s.P95, s.P99, s.P999 = vals[0], vals[1], vals[2], vals[3], vals[4]
	return s
}
