package engine

import (
	"sort"
	"time"
)

// Distribution is a latency distribution over a rolling window as the
// hedging model reads it: the histogram's buckets with their exact and
// right-censored counts, and the Kaplan–Meier survival curve over them
// (the product-limit estimate QuantileCensored and the auto delay use).
// It is a copy: nothing in it aliases the window.
type Distribution struct {
	Exact    int64 // observations whose latency is known
	Censored int64 // observations known only to exceed their value (cut short)
	Buckets  []DistBucket
	// Survival is S(t) = P(T > t) as a step function: S is 1 before the
	// first step and Survival[i].S from Survival[i].At until the next step.
	// A step sits at the top of each bucket holding exact observations.
	Survival []SurvivalStep
}

// DistBucket is one histogram bucket: every value in [Low, High] falls in
// it. Only populated buckets are listed, in ascending order.
type DistBucket struct {
	Low, High time.Duration
	Exact     int64
	Censored  int64
}

// SurvivalStep is one step of a survival curve.
type SurvivalStep struct {
	At time.Duration
	S  float64
}

// Samples is the number of observations, exact and censored.
func (d Distribution) Samples() int64 { return d.Exact + d.Censored }

// Max is the largest value the window holds (the top of its last bucket),
// exact or censored; 0 if empty.
func (d Distribution) Max() time.Duration {
	if len(d.Buckets) == 0 {
		return 0
	}
	return d.Buckets[len(d.Buckets)-1].High
}

// SurvivalAt is S(t) = P(T > t).
func (d Distribution) SurvivalAt(t time.Duration) float64 { return stepAt(d.Survival, t) }

func stepAt(steps []SurvivalStep, t time.Duration) float64 {
	k := sort.Search(len(steps), func(i int) bool { return steps[i].At > t })
	if k == 0 {
		return 1
	}
	return steps[k-1].S
}

// quantileEps absorbs the rounding of the product-limit estimate when a
// step lands exactly on q (the same tolerance QuantileCensored uses).
const quantileEps = 1e-9

// Quantile is the smallest step where 1 − S reaches q. ok is false when
// censoring leaves the curve short of q (every observation past some point
// was cut short): then the largest observation is returned, a lower bound.
// 0 and false if empty.
func (d Distribution) Quantile(q float64) (v time.Duration, ok bool) {
	k := sort.Search(len(d.Survival), func(i int) bool { return 1-d.Survival[i].S >= q-quantileEps })
	if k == len(d.Survival) {
		return d.Max(), false
	}
	return d.Survival[k].At, true
}

// Distribution copies the window's buckets and computes the product-limit
// survival over them, under the window's lock. The work is proportional to
// the buckets in use (a few hundred for a latency spread over a decade).
//
//	S(b) = Π over buckets i ≤ b of (1 − d_i / n_i)
//
// with d_i the exact observations in bucket i and n_i those still at risk
// there (exact or censored, in bucket i or above): a censored observation
// is at risk in its own bucket, as in QuantileCensored.
func (w *LatencyWindow) Distribution() Distribution {
	w.lockCurrent()
	defer w.mu.Unlock()
	nE, nC := total(w.exact), total(w.cens)
	d := Distribution{Exact: nE, Censored: nC}
	if nE+nC == 0 {
		return d
	}
	var exact, cens []bucketCount
	if nE > 0 {
		exact = make([]bucketCount, 0, w.exact.Populated())
		w.exact.ForEachBucket(func(v, c int64) bool { exact = append(exact, bucketCount{v, c}); return true })
	}
	if nC > 0 {
		cens = make([]bucketCount, 0, w.cens.Populated())
		w.cens.ForEachBucket(func(v, c int64) bool { cens = append(cens, bucketCount{v, c}); return true })
	}
	d.Buckets = make([]DistBucket, 0, len(exact)+len(cens))
	d.Survival = make([]SurvivalStep, 0, len(exact))
	atRisk, s := nE+nC, 1.0
	i, j := 0, 0
	for i < len(exact) || j < len(cens) {
		var v, e, c int64
		switch {
		case j == len(cens) || i < len(exact) && exact[i].value < cens[j].value:
			v, e = exact[i].value, exact[i].count
			i++
		case i == len(exact) || cens[j].value < exact[i].value:
			v, c = cens[j].value, cens[j].count
			j++
		default: // the same bucket in both
			v, e, c = exact[i].value, exact[i].count, cens[j].count
			i++
			j++
		}
		top := fromMicros(bucketTop(v))
		d.Buckets = append(d.Buckets, DistBucket{Low: fromMicros(v), High: top, Exact: e, Censored: c})
		if e > 0 {
			s *= 1 - float64(e)/float64(atRisk)
			d.Survival = append(d.Survival, SurvivalStep{At: top, S: s})
		}
		atRisk -= e + c
	}
	return d
}
