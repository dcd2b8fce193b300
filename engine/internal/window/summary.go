package window

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

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
	vals := [5]*time.Duration{&s.P50, &s.P90, &s.P95, &s.P99, &s.P999}
	if s.Censored == 0 {
		for i, q := range SummaryQuantiles {
			*vals[i] = fromMicros(h.ValueAtPercentile(q * 100))
		}
		return s
	}
	w.productLimitSummaryLocked(h, vals, &s.Open)
	return s
}

// productLimitSummaryLocked puts the Kaplan–Meier quantiles of exact
// (h, the window's answers and any extra) and the window's censored
// observations into vals, in one walk over the buckets. Dropping the
// censored ones would bias the tail low, exactly the slow attempts being
// the ones cut short (a primary its hedge outran). A quantile is open (a
// lower bound) where censoring leaves the estimate short of it: the curve
// ends above 1 − q (every observation past some point cut short: then it
// is the largest observation), or censoring dominates the curve before it
// reaches q with fewer than MinTailAnswers answers left to carry it (then
// it is the last answer before that point): the same horizon the hedge
// delay and the forecast stop at (DelayQuantile, Distribution.Horizon).
func (w *Latency) productLimitSummaryLocked(h *hdr.PackedHistogram, vals [5]*time.Duration, open *[5]bool) {
	w.cbuf = w.cbuf[:0]
	w.cens.ForEachBucket(func(v, c int64) bool {
		w.cbuf = append(w.cbuf, bucketCount{v, c})
		return true
	})
	const eps = 1e-9 // rounding of the product, as in productLimitLocked
	nE := h.TotalCount()
	atRisk, left := nE+w.cens.TotalCount(), nE
	s, g := 1.0, 1.0 // the survival, and Ĝ: the share not yet cut short
	next, ci, last, dominated := 0, 0, int64(-1), false
	h.ForEachBucket(func(v, d int64) bool {
		// A censored observation is at risk in its own bucket and leaves
		// the risk set after it, as in Distribution.Horizon.
		for ci < len(w.cbuf) && w.cbuf[ci].value < v {
			if c := w.cbuf[ci].count; atRisk > 0 {
				g *= 1 - float64(c)/float64(atRisk)
				atRisk -= c
			}
			ci++
		}
		if g < CensoringDominates && left < MinTailAnswers {
			if last < 0 {
				last = v // dominated from the first answer: that answer
			}
			dominated = true
			return false
		}
		last = v
		if atRisk > 0 {
			s *= 1 - float64(d)/float64(atRisk)
		}
		atRisk -= d
		left -= d
		for next < len(vals) && s <= 1-SummaryQuantiles[next]+eps {
			*vals[next] = fromMicros(bucketTop(v))
			next++
		}
		return next < len(vals)
	})
	bound := fromMicros(bucketTop(last))
	if !dominated {
		bound = fromMicros(max(h.Max(), w.cens.Max()))
	}
	for ; next < len(vals); next++ {
		*vals[next], open[next] = bound, true
	}
}
