package bench

import (
	"errors"
	"slices"
	"sort"
	"time"
)

// Dist is an empirical latency distribution (a step function): the distinct
// observed values in ascending order with cumulative counts.
type Dist struct {
	values []time.Duration
	cum    []int64 // cum[i]: observations ≤ values[i]
}

// DistFromSamples builds a Dist from raw latencies.
func DistFromSamples(samples []time.Duration) (*Dist, error) {
	if len(samples) == 0 {
		return nil, errors.New("bench: empty latency sample")
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	d := &Dist{}
	for i, v := range s {
		if n := len(d.values); n > 0 && d.values[n-1] == v {
			d.cum[n-1] = int64(i + 1)
			continue
		}
		d.values = append(d.values, v)
		d.cum = append(d.cum, int64(i+1))
	}
	return d, nil
}

// Count is the number of observations.
func (d *Dist) Count() int64 { return d.cum[len(d.cum)-1] }

// Survival is S(t) = P(T > t).
func (d *Dist) Survival(t time.Duration) float64 {
	k := sort.Search(len(d.values), func(i int) bool { return d.values[i] > t })
	if k == 0 {
		return 1
	}
	total := d.Count()
	return float64(total-d.cum[k-1]) / float64(total)
}

// Quantile is the smallest observed t with P(T ≤ t) ≥ q.
func (d *Dist) Quantile(q float64) time.Duration {
	total := float64(d.Count())
	k := sort.Search(len(d.cum), func(i int) bool { return float64(d.cum[i])/total >= q-eps })
	return d.values[min(k, len(d.values)-1)]
}

// eps absorbs float rounding when a step lands exactly on q.
const eps = 1e-9

// HedgedSurvival is the model's completion-time survival with one
// independent duplicate, drawn from the same distribution, sent after
// delay: S(t) before the delay and S(t)·S(t−delay) from it on. It assumes
// the duplicate slows nothing down, which holds only with spare capacity.
func (d *Dist) HedgedSurvival(t, delay time.Duration) float64 {
	s := d.Survival(t)
	if t < delay {
		return s
	}
	return s * d.Survival(t-delay)
}

// HedgedQuantile is the smallest t with 1 − HedgedSurvival(t, delay) ≥ q.
// The hedged survival only steps at an observed value v, at v+delay, or at
// delay itself, so those are the only candidates.
func (d *Dist) HedgedQuantile(q float64, delay time.Duration) time.Duration {
	cands := make([]time.Duration, 0, 2*len(d.values)+1)
	cands = append(cands, d.values...)
	for _, v := range d.values {
		cands = append(cands, v+delay)
	}
	cands = append(cands, delay)
	slices.Sort(cands)
	k := sort.Search(len(cands), func(i int) bool { return 1-d.HedgedSurvival(cands[i], delay) >= q-eps })
	return cands[min(k, len(cands)-1)]
}

// forecastP99 feeds the model column: the model's p99, in ms, for one
// duplicate after delay over the baseline's single-attempt latencies.
// Issue 12 moves the model into the engine as one forecast function, which
// the console's tuning view shares; this is the only place bench calls the
// model, so that the swap is a one-line change here.
func forecastP99(baseline *Dist, delay time.Duration) float64 {
	return msOf(baseline.HedgedQuantile(0.99, delay))
}
