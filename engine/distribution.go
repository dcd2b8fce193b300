package engine

import (
	"sort"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
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

// Horizon is how far the survival curve rests on answers seen: the last
// step before censoring dominates, where Ĝ(t), the product-limit share of
// the window not yet cut short before t, is below
// window.CensoringDominates (each answer past t then carries the mass of
// more than two primaries, the others known only to take longer) and fewer
// than window.MinTailAnswers answers are left to carry it. It is the
// largest answer when censoring never dominates; dominated says it does.
// 0 if there is no answer.
func (d Distribution) Horizon() (h time.Duration, dominated bool) {
	atRisk, g, left := d.Samples(), 1.0, d.Exact
	for _, b := range d.Buckets {
		if b.Exact > 0 {
			if g < window.CensoringDominates && left < window.MinTailAnswers {
				if h == 0 {
					h = b.High // dominated from the first answer: that answer
				}
				return h, true
			}
			h = b.High
			atRisk -= b.Exact
			left -= b.Exact
		}
		if b.Censored > 0 && atRisk > 0 {
			g *= 1 - float64(b.Censored)/float64(atRisk)
		}
		atRisk -= b.Censored
	}
	return h, false
}

// DelayQuantile is the auto delay's quantile: Quantile, never past the
// Horizon. ok is false when the horizon stopped it (censoring ends the curve
// or dominates it before q): the value is then a lower bound.
func (d Distribution) DelayQuantile(q float64) (time.Duration, bool) {
	v, ok := d.Quantile(q)
	if h, _ := d.Horizon(); !ok || v > h {
		return h, false
	}
	return v, true
}

// distributionOf copies the window's buckets (under its lock) and computes
// the product-limit survival over them. The work is proportional to the
// buckets in use (a few hundred for a latency spread over a decade).
//
//	S(b) = Π over buckets i ≤ b of (1 − d_i / n_i)
//
// with d_i the exact observations in bucket i and n_i those still at risk
// there (exact or censored, in bucket i or above): a censored observation
// is at risk in its own bucket, as in QuantileCensored.
func distributionOf(w *window.Latency) Distribution {
	buckets := w.Buckets()
	var d Distribution
	for _, b := range buckets {
		d.Exact += b.Exact
		d.Censored += b.Censored
	}
	if len(buckets) == 0 {
		return d
	}
	d.Buckets = make([]DistBucket, len(buckets))
	d.Survival = make([]SurvivalStep, 0, len(buckets))
	atRisk, s := d.Exact+d.Censored, 1.0
	for i, b := range buckets {
		d.Buckets[i] = DistBucket(b)
		if b.Exact > 0 {
			s *= 1 - float64(b.Exact)/float64(atRisk)
			d.Survival = append(d.Survival, SurvivalStep{At: b.High, S: s})
		}
		atRisk -= b.Exact + b.Censored
	}
	return d
}

// DistributionOf is the distribution of observations as the engine's
// windows hold them, in the same histogram buckets: exact latencies, and
// censored ones (known only to exceed their value, as a primary cut short
// by a winning hedge). Bench's model reads its rows' answers through it.
func DistributionOf(exact, censored []time.Duration) Distribution {
	t0 := time.Unix(0, 0) // a clock that stands still: nothing ages out
	w := window.NewLatency(time.Hour, 1, func() time.Time { return t0 })
	for _, d := range exact {
		w.Record(d)
	}
	for _, d := range censored {
		w.RecordCensored(d)
	}
	return distributionOf(w)
}
