package engine

import (
	"math"
	"slices"
	"time"
)

// The hedging model (tail-geometry seed, §5): a primary with survival
// S(t) and a duplicate sent after delay d to a target with survival H(t)
// finish, the first success winning, with survival
//
//	S(t)                  for t < d
//	S(t) · H(t − d)       from d on
//
// and the j-th of max_extra duplicates, sent j·d after the primary while
// nothing has answered, adds its own factor H(t − j·d). The hedge budget
// (a token bucket: ratio per request, burst at most) lets only a share c
// of the wanted duplicates go once they would exceed the ratio; a refused
// duplicate ends the request's hedging, so each factor becomes
// (1 − c) + c·H(t − j·d)·(the later factors). The model assumes that
// duplicates slow nothing down and that the endpoints fail independently:
// under a shared cause it is optimistic.

// ForecastInput is what the forecast needs.
type ForecastInput struct {
	Primary Distribution
	// Targets are where the duplicates go, weighted (by how many hedges
	// each endpoint took); none: the primary's own distribution.
	Targets  []HedgeTarget
	Delay    time.Duration
	MaxExtra int     // duplicates per request; 0: not hedged
	Budget   float64 // hedge.budget: hedges may add at most this share of requests
	Burst    float64 // hedge.budget_burst: cost units the bucket holds
	// Lag is how late duplicates go out after their delay (hedgelag.go):
	// each is sent at j·(Delay + Lag).
	Lag time.Duration
}

// HedgeTarget is an endpoint hedges go to, with its share of them.
type HedgeTarget struct {
	Endpoint string
	Weight   float64
	Dist     Distribution
}

// HedgeForecast is the model's prediction for one delay.
type HedgeForecast struct {
	Delay time.Duration
	// FireRate is the share of requests that send a duplicate; ExtraLoad
	// the duplicates per request (extra upstream requests over the
	// requests: the amplification is 1 + ExtraLoad).
	FireRate  float64
	ExtraLoad float64
	// Predicted percentiles of the hedged latency. Open[i] marks one the
	// data cannot resolve (censoring ends the curve above it): the value
	// is then a lower bound. Order: p50, p95, p99, p99.9.
	P50, P95, P99, P999 time.Duration
	Open                [4]bool
	// Thin[i] marks an Open figure that the data reach but rest on too
	// few answers, censoring having cut most primaries short before it:
	// the figure is the low end of its 95 % interval.
	Thin [4]bool
	// BudgetCapped: the duplicates wanted exceed hedge.budget, so only
	// FiringShare of them go (the percentiles above count that), once the
	// burst is spent: BurstRequests requests at the wanted rate empty it.
	BudgetCapped   bool
	WantedFireRate float64 // the fire rate without the budget
	FiringShare    float64 // 1 when not capped
	BurstRequests  float64
	Samples        int64 // primary observations the forecast rests on
}

// forecastQuantiles are the quantiles HedgeForecast reports.
var forecastQuantiles = [4]float64{0.50, 0.95, 0.99, 0.999}

// Forecast predicts hedging at in.Delay from the distributions: a pure
// function of its input. With no primary observations it returns only the
// delay.
func Forecast(in ForecastInput) HedgeForecast {
	f, _ := newHedgeModel(in)
	return f
}

// hedgeModel is one forecast's model, kept for further quantiles.
type hedgeModel struct {
	primary []SurvivalStep
	target  []SurvivalStep
	delay   time.Duration
	extra   int
	share   float64
	cands   []time.Duration // every time the hedged survival can step at
}

func newHedgeModel(in ForecastInput) (HedgeForecast, *hedgeModel) {
	f := HedgeForecast{Delay: max(in.Delay, 0), Samples: in.Primary.Samples(), FiringShare: 1}
	if f.Samples == 0 || len(in.Primary.Survival) == 0 {
		return f, nil
	}
	m := &hedgeModel{primary: in.Primary.Survival, target: mixture(in.Primary, in.Targets), delay: f.Delay + max(in.Lag, 0), extra: max(in.MaxExtra, 0), share: 1}
	wanted := m.fires(1)
	f.WantedFireRate = m.pending(1)
	if m.extra > 0 && wanted > in.Budget {
		f.BudgetCapped = true
		m.share = m.shareWithin(max(in.Budget, 0))
		if excess := wanted - in.Budget; excess > 0 {
			f.BurstRequests = max(in.Burst, 0) / excess
		}
	}
	f.FiringShare = m.share
	if m.extra > 0 {
		f.FireRate = m.share * f.WantedFireRate
		f.ExtraLoad = m.fires(m.share)
	}
	m.candidates()
	// Past the primaries' horizon, when censoring dominates there, the
	// curve rests on a few answers that inherit the mass of many primaries
	// cut short: a figure past it says only "at least the horizon". The
	// estimate beyond it is as noisy as a thin one, and may overshoot the
	// truth, so the horizon bounds it only where it is lower than the low
	// end of the figure's interval: it claimed ≥ 905–946 ms for a true 900
	// in 4 of 60 windows when it stood alone.
	horizon, dominated := in.Primary.Horizon()
	vals := [4]*time.Duration{&f.P50, &f.P95, &f.P99, &f.P999}
	for i, q := range forecastQuantiles {
		v, ok := m.quantile(q)
		rel, thin := in.Primary.thinAt(v)
		past := dominated && v > horizon
		if rel > 0 && (past || ok && thin) {
			// Too few answers past it (forecast_precision.go): the low end
			// of its 95 % interval, which the truth exceeds, and never
			// below the figure of the percentile before it.
			low, _ := m.quantile(max(1-(1-q)*(1+trialZ*rel), 0))
			if i > 0 {
				low = max(low, *vals[i-1])
			}
			v, ok = low, false
			f.Thin[i] = true
		}
		if past && v > horizon {
			v, ok = horizon, false
			f.Thin[i] = false
		}
		*vals[i], f.Open[i] = v, !ok
	}
	return f, m
}

// mixture is the survival of the duplicates' targets: Σ w·H over the
// targets with weight and observations, or the primary's own.
func mixture(primary Distribution, targets []HedgeTarget) []SurvivalStep {
	var sum float64
	var use []HedgeTarget
	for _, t := range targets {
		if t.Weight > 0 && len(t.Dist.Survival) > 0 {
			use = append(use, t)
			sum += t.Weight
		}
	}
	switch len(use) {
	case 0:
		return primary.Survival
	case 1:
		return use[0].Dist.Survival
	}
	var at []time.Duration
	for _, t := range use {
		for _, s := range t.Dist.Survival {
			at = append(at, s.At)
		}
	}
	slices.Sort(at)
	at = slices.Compact(at)
	out := make([]SurvivalStep, len(at))
	for i, t := range at {
		var s float64
		for _, u := range use {
			s += u.Weight * stepAt(u.Dist.Survival, t)
		}
		out[i] = SurvivalStep{At: t, S: s / sum}
	}
	return out
}

// pending is the probability that a request still waits when duplicate j
// is due (j·d), every earlier duplicate having gone.
func (m *hedgeModel) pending(j int) float64 {
	t := time.Duration(j) * m.delay
	p := stepAt(m.primary, t)
	for i := 1; i < j; i++ {
		p *= stepAt(m.target, t-time.Duration(i)*m.delay)
	}
	return p
}

// fires is the duplicates per request when each wanted one goes with
// probability c.
func (m *hedgeModel) fires(c float64) float64 {
	var sum float64
	for j := 1; j <= m.extra; j++ {
		sum += math.Pow(c, float64(j)) * m.pending(j)
	}
	return sum
}

// shareWithin is the share c of wanted duplicates that lets fires(c) equal
// the budget: the bucket's long-run rate. fires is increasing in c.
func (m *hedgeModel) shareWithin(budget float64) float64 {
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if m.fires(mid) > budget {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}

// survival is the hedged completion time's survival at t.
func (m *hedgeModel) survival(t time.Duration) float64 {
	return stepAt(m.primary, t) * m.after(1, t)
}

// after is the factor of duplicates j and later at t.
func (m *hedgeModel) after(j int, t time.Duration) float64 {
	due := time.Duration(j) * m.delay
	if j > m.extra || t < due {
		return 1
	}
	return (1 - m.share) + m.share*stepAt(m.target, t-due)*m.after(j+1, t)
}

// candidates are the times the hedged survival steps at: the primary's
// steps and each duplicate's steps shifted by its send time.
func (m *hedgeModel) candidates() {
	c := make([]time.Duration, 0, len(m.primary)+m.extra*len(m.target))
	for _, s := range m.primary {
		c = append(c, s.At)
	}
	if m.share > 0 {
		for j := 1; j <= m.extra; j++ {
			due := time.Duration(j) * m.delay
			for _, s := range m.target {
				c = append(c, s.At+due)
			}
		}
	}
	slices.Sort(c)
	m.cands = slices.Compact(c)
}

// quantile is the smallest step time where 1 − survival reaches q; ok is
// false when it never does (the data end first): then the last step, a
// lower bound.
func (m *hedgeModel) quantile(q float64) (time.Duration, bool) {
	lo, hi := 0, len(m.cands)
	for lo < hi {
		mid := (lo + hi) / 2
		if 1-m.survival(m.cands[mid]) >= q-quantileEps {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == len(m.cands) {
		return m.cands[len(m.cands)-1], false
	}
	return m.cands[lo], true
}
