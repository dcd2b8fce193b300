package engine

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// After a live change of a method's hedging, the tuning view puts what the
// model predicted at the change beside what clients have seen since, so an
// operator sees whether the model held. Each interval is a 95 % one: the
// measured p99's from order statistics (the share of requests above the
// true p99 is binomial), the prediction's from the size of the window it
// was made from. When both are known and apart, measurement has departed
// from prediction by more than chance allows.

// HedgeTrial is a method's hedging since its last live change.
type HedgeTrial struct {
	Since       time.Time
	Enabled     bool
	Delay       time.Duration // in force right after the change
	DelaySource string
	// Predicted is the forecast p99 at the change (0: nothing to forecast
	// from), within [PredictedLow, PredictedHigh].
	Predicted, PredictedLow, PredictedHigh time.Duration
	// PredictedLowerBound: censoring left the forecast p99 a lower bound
	// (HedgeForecast.Open), Predicted and PredictedLow; PredictedHigh is
	// 0, nothing bounding it above. Only a measurement below it by more
	// than chance allows departs from it (faster).
	PredictedLowerBound bool
	// Measured is the p99 of the method's client requests answered since
	// the change (rpcdash's own errors are not answers, which the forecast
	// predicts), within [MeasuredLow, MeasuredHigh];
	// those are 0 while Samples are too few to bound it.
	Measured, MeasuredLow, MeasuredHigh time.Duration
	Samples                             int64
	Departs                             bool
	// The method's hedges since the change: sent (HedgesFired), and due
	// but not sent for the hedge budget (BudgetRefused). The budget is
	// the pool's, spent by every method: a prediction made when it held
	// enough assumed hedges that were then never sent (a trial at 250 ms
	// read "the model holds" with none sent, 407 refused for the budget
	// that methods at 50 ms had spent, its p99 614 ms against 305).
	HedgesFired, BudgetRefused int64
}

// Unhedged says the trial's hedging did not run as predicted: hedges fell
// due and the budget sent fewer than half of them.
func (t HedgeTrial) Unhedged() bool {
	return t.BudgetRefused > 0 && t.BudgetRefused >= t.HedgesFired
}

// Slower says the measurement departs above the prediction: what a shared
// cause does, hedges meeting the same slowness (the model was optimistic).
// One below it says the distribution the prediction rested on has changed
// since, not that the endpoints share fate.
func (t HedgeTrial) Slower() bool {
	_, phi := t.predictedBounds()
	return t.Departs && t.MeasuredLow > phi
}

// predictedBounds is the prediction's interval, the prediction itself when
// it came from too few samples to bound it; a lower bound's has no end.
func (t HedgeTrial) predictedBounds() (lo, hi time.Duration) {
	if t.PredictedLowerBound {
		return t.Predicted, math.MaxInt64
	}
	if t.PredictedHigh == 0 {
		return t.Predicted, t.Predicted
	}
	return t.PredictedLow, t.PredictedHigh
}

// trialQuantile is the quantile a trial compares; trialZ the normal
// quantile of its 95 % intervals.
const (
	trialQuantile = 0.99
	trialZ        = 1.96
)

// hedgeTrials are the current trials by method (as clients spell it),
// replaced whole on a change so that a request reads them without a lock.
type hedgeTrials struct {
	mu  sync.Mutex // writers
	cur atomic.Pointer[map[string]*hedgeTrial]
}

type hedgeTrial struct {
	info HedgeTrial // what was set and predicted at the change
	mu   sync.Mutex
	lat  *window.Histogram // client latencies since
	// acct is the method's counters, fired and refused what they held at
	// the change.
	acct           *counts
	fired, refused int64
}

// observe records one client request of method that took d.
func (t *hedgeTrials) observe(method string, d time.Duration) {
	m := t.cur.Load()
	if m == nil {
		return
	}
	tr := (*m)[method]
	if tr == nil {
		return
	}
	tr.mu.Lock()
	tr.lat.Record(d)
	tr.mu.Unlock()
}

func (t *hedgeTrials) replace(trs []*hedgeTrial, methods []string) {
	if len(trs) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	next := map[string]*hedgeTrial{}
	if old := t.cur.Load(); old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	for i, tr := range trs {
		next[methods[i]] = tr
	}
	t.cur.Store(&next)
}

// get is method's trial as it stands, nil if none.
func (t *hedgeTrials) get(method string) *HedgeTrial {
	m := t.cur.Load()
	if m == nil {
		return nil
	}
	tr := (*m)[method]
	if tr == nil {
		return nil
	}
	out := tr.info
	if tr.acct != nil {
		out.HedgesFired = tr.acct.hedgesFired.Load() - tr.fired
		out.BudgetRefused = tr.acct.refused[refusedBudget].Load() - tr.refused
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out.Samples = tr.lat.Count()
	if out.Samples == 0 {
		return &out
	}
	out.Measured = tr.lat.Quantile(trialQuantile)
	if lo, hi, ok := quantileInterval(trialQuantile, out.Samples); ok {
		out.MeasuredLow = tr.lat.Quantile(lo)
		out.MeasuredHigh = tr.lat.Quantile(hi)
		plo, phi := out.predictedBounds()
		out.Departs = out.Predicted > 0 && (out.MeasuredHigh < plo || out.MeasuredLow > phi)
	}
	return &out
}

// uncappedLow is the low end, at quantile lo, of the p99 the method's
// hedging would give unhedged by the budget. A capped forecast is the
// budget's steady state, but what the budget holds at the change hedges
// every request that wants it until spent (BurstRequests), so a trial
// measures the uncapped p99 first and the capped one in the long run:
// judged by the capped interval alone, a trial at 90 ms over endpoints
// with 8 % of their answers slow (10.5 % wanted, budget 10 %) measured
// 136 ms against a predicted [245, 358] and "departed" while the model
// held.
func uncappedLow(md MethodDistribution, lo float64) time.Duration {
	in := md.forecastInput(md.Hedge.Delay, md.Hedge.Enabled)
	in.Budget = math.Inf(1)
	_, free := newHedgeModel(in)
	if free == nil {
		return math.MaxInt64
	}
	low, _ := free.quantile(lo)
	return low
}

// quantileInterval is the 95 % interval of the ranks (as quantiles) that
// bound the q-quantile of n samples; ok is false while n is too small for
// the upper one to exist.
func quantileInterval(q float64, n int64) (lo, hi float64, ok bool) {
	se := math.Sqrt(q * (1 - q) / float64(n))
	lo, hi = q-trialZ*se, q+trialZ*se
	return max(lo, 0), hi, hi < 1
}

// beginTrials starts a trial for the method a single-method update names,
// and for each method whose hedging a pool-wide one changed (before:
// every method's setting before it, settingsNow), not one held at its own
// delay. It returns, for a single method, the prediction in words
// for the event.
func (e *Engine) beginTrials(u HedgeUpdate, before map[string]hedgeSetting) string {
	var methods []string
	for k := range e.hedge.methods.all() {
		if u.Method == "" || strings.EqualFold(k, u.Method) {
			methods = append(methods, k)
		}
	}
	var trs []*hedgeTrial
	var keys []string
	said := ""
	for _, k := range methods {
		// A single method's update restarts its trial whatever it set: the
		// operator asked for that method, and it now holds its own setting.
		if u.Method == "" && e.hedge.settingOf(k) == before[k] {
			continue
		}
		md, err := e.MethodDistribution(k)
		if err != nil {
			continue
		}
		acct := e.acct.method(e.names.statsName(k))
		tr := &hedgeTrial{lat: window.NewHistogram(), info: HedgeTrial{Since: e.now(), Enabled: md.Hedge.Enabled,
			Delay: md.Hedge.Delay, DelaySource: md.Hedge.Source},
			acct: acct, fired: acct.hedgesFired.Load(), refused: acct.refused[refusedBudget].Load()}
		f, model := newHedgeModel(md.forecastInput(md.Hedge.Delay, md.Hedge.Enabled))
		switch {
		case model != nil && f.Open[2] && f.P99 > 0:
			// A lower bound, kept as one (it read 0, "nothing to forecast
			// from", and never departed): checked one-sidedly.
			tr.info.Predicted, tr.info.PredictedLow, tr.info.PredictedLowerBound = f.P99, f.P99, true
		case model != nil && !f.Open[2]:
			tr.info.Predicted = f.P99
			// As many samples as know the curve there: censoring before
			// the p99 leaves fewer (forecast_precision.go).
			n := int64(md.Primary.effectiveSamples(f.P99))
			if lo, hi, ok := quantileInterval(trialQuantile, n); ok {
				tr.info.PredictedLow, _ = model.quantile(lo)
				tr.info.PredictedHigh, _ = model.quantile(hi)
				if f.BudgetCapped {
					tr.info.PredictedLow = min(tr.info.PredictedLow, uncappedLow(md, lo))
				}
			}
		}
		if model != nil && u.Method != "" {
			at := ""
			if f.Open[2] {
				at = "≥" // the data end before the p99
			}
			said = fmt.Sprintf("; forecast p99 %s%s, fire %.1f%%, extra load %.1f%%", at, f.P99.Round(100*time.Microsecond), 100*f.FireRate, 100*f.ExtraLoad)
			if f.BudgetCapped {
				said += " (capped by the budget)"
			}
		}
		trs, keys = append(trs, tr), append(keys, k)
	}
	e.trials.replace(trs, keys)
	return said
}
