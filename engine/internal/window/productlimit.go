package window

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// kmStop is where a product-limit walk stops when the data leave it short
// of a quantile.
type kmStop uint8

const (
	// kmCurveEnd follows the curve as far as it goes; short of q, the
	// largest observation, exact or censored (QuantileCensored).
	kmCurveEnd kmStop = iota
	// kmHorizon stops where censoring dominates (CensoringDominates) with
	// fewer than MinTailAnswers answers left, at the last answer before
	// that point; a curve that ends short of q gives the largest
	// observation (Summary).
	kmHorizon
	// kmLastAnswer is kmHorizon that never goes past the slowest answer
	// (DelayQuantile).
	kmLastAnswer
)

// productLimitLocked is the Kaplan–Meier estimate over exact (the
// window's answers, or a copy with more) and the window's censored
// observations, in one walk over their buckets:
//
//	S(b) = Π over buckets i ≤ b of (1 − d_i / n_i)
//
// It puts the qs[i]-quantile (qs ascending) into vals[i], the top of the
// first bucket where 1 − S reaches it, and marks in open those the walk
// stopped short of (lower bounds, placed as stop says). A censored
// observation is at risk in its own bucket and leaves the risk set after
// it, as in Distribution.Horizon. exact holds at least one answer.
func (w *Latency) productLimitLocked(exact *hdr.PackedHistogram, qs []float64, vals []time.Duration, open []bool, stop kmStop) {
	w.cbuf = w.cbuf[:0]
	if w.cens != nil {
		w.cens.ForEachBucket(func(v, c int64) bool {
			w.cbuf = append(w.cbuf, bucketCount{v, c})
			return true
		})
	}
	const eps = 1e-9 // rounding of the product, far below 1/count
	left := exact.TotalCount()
	atRisk := left + total(w.cens)
	// Between censored buckets the product telescopes, S = s0·atRisk/n0
	// (s0 and n0 where the stretch began): a multiplication per bucket
	// and a division per stretch, not a division per bucket.
	s, g := 1.0, 1.0 // the survival, and Ĝ: the share not yet cut short
	perAtRisk := 1 / float64(atRisk)
	next, ci, last, dominated := 0, 0, int64(-1), false
	exact.ForEachBucket(func(v, d int64) bool {
		if ci < len(w.cbuf) && w.cbuf[ci].value < v {
			for ci < len(w.cbuf) && w.cbuf[ci].value < v {
				if c := w.cbuf[ci].count; atRisk > 0 {
					g *= 1 - float64(c)/float64(atRisk)
					atRisk -= c
				}
				ci++
			}
			if atRisk > 0 {
				perAtRisk = s / float64(atRisk)
			}
		}
		if stop != kmCurveEnd && g < CensoringDominates && left < MinTailAnswers {
			if last < 0 {
				last = v // dominated from the first answer: that answer
			}
			dominated = true
			return false
		}
		last = v
		atRisk -= d
		left -= d
		s = float64(atRisk) * perAtRisk
		for next < len(qs) && s <= 1-qs[next]+eps {
			vals[next] = fromMicros(bucketTop(v))
			next++
		}
		return next < len(qs)
	})
	bound := fromMicros(bucketTop(last))
	if !dominated && stop != kmLastAnswer {
		bound = fromMicros(max(exact.Max(), w.cens.Max()))
	}
	for ; next < len(qs); next++ {
		vals[next], open[next] = bound, true
	}
}
