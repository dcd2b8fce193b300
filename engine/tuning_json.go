package engine

import (
	"encoding/json"
	"time"
)

// The wire shapes of GET /v1/methods/{method}/distribution and
// GET /v1/hedge/forecast, read back by an attached console. Latencies in
// milliseconds; a forecast row carries the fields issue 12 names, and which of its
// percentiles are lower bounds.

type distributionWire struct {
	Exact    int64          `json:"exact"`
	Censored int64          `json:"censored"`
	Samples  int64          `json:"samples"`
	Buckets  []bucketWire   `json:"buckets"`
	Survival []survivalWire `json:"survival"`
}

type bucketWire struct {
	LowMS    float64 `json:"low_ms"`
	HighMS   float64 `json:"high_ms"`
	Exact    int64   `json:"exact"`
	Censored int64   `json:"censored"`
}

type survivalWire struct {
	MS       float64 `json:"ms"`
	Survival float64 `json:"survival"`
}

type targetWire struct {
	Endpoint string  `json:"endpoint"`
	Hedges   float64 `json:"hedges"` // over the window: the target's weight
	distributionWire
}

type methodHedgeWire struct {
	Enabled     bool    `json:"enabled"`
	DelayMS     float64 `json:"delay_ms"`
	DelaySource string  `json:"delay_source"`
	Quantile    float64 `json:"quantile"`
	MaxExtra    int     `json:"max_extra"`
	Budget      float64 `json:"budget"`
	BudgetBurst float64 `json:"budget_burst"`
	BudgetCap   float64 `json:"budget_cap"`
	// LagMS is how late hedges have gone out after their delay lately
	// (MethodHedgeSettings.Lag), which the forecast counts.
	LagMS float64 `json:"lag_ms"`
}

type trialWire struct {
	Since         time.Time `json:"since"`
	Enabled       bool      `json:"enabled"`
	DelayMS       float64   `json:"delay_ms"`
	DelaySource   string    `json:"delay_source"`
	PredictedMS   float64   `json:"predicted_p99_ms"`
	PredictedLow  float64   `json:"predicted_p99_low_ms"`
	PredictedHigh float64   `json:"predicted_p99_high_ms"`
	// PredictedLowerBound: predicted_p99_ms is a lower bound (HedgeTrial).
	PredictedLowerBound bool    `json:"predicted_p99_lower_bound"`
	MeasuredMS          float64 `json:"measured_p99_ms"`
	MeasuredLow         float64 `json:"measured_p99_low_ms"`
	MeasuredHigh        float64 `json:"measured_p99_high_ms"`
	Samples             int64   `json:"samples"`
	Departs             bool    `json:"departs"`
	HedgesFired         int64   `json:"hedges_fired"`
	BudgetRefused       int64   `json:"hedges_refused_budget"`
}

type methodDistributionWire struct {
	Method  string  `json:"method"`
	Window  string  `json:"window"`
	WindowS float64 `json:"window_s"`
	distributionWire
	Untimed int64           `json:"untimed"`
	Targets []targetWire    `json:"targets"`
	Hedge   methodHedgeWire `json:"hedge"`
	Trial   *trialWire      `json:"since_change,omitempty"`
}

type forecastRowWire struct {
	DelayMS      float64 `json:"delay_ms"`
	FireRate     float64 `json:"fire_rate"`
	P50MS        float64 `json:"p50_ms"`
	P95MS        float64 `json:"p95_ms"`
	P99MS        float64 `json:"p99_ms"`
	P999MS       float64 `json:"p999_ms"`
	ExtraLoad    float64 `json:"extra_load"`
	BudgetCapped bool    `json:"budget_capped"`
	Samples      int64   `json:"samples"`
	// LowerBounds names the percentile fields that censoring leaves
	// lower bounds (HedgeForecast.Open): "p99_ms", "p999_ms".
	LowerBounds []string `json:"lower_bounds"`
}

// percentileFields are the wire names of HedgeForecast's percentiles, in
// Open's order.
var percentileFields = [4]string{"p50_ms", "p95_ms", "p99_ms", "p999_ms"}

type forecastReportWire struct {
	Method string            `json:"method"`
	Rows   []forecastRowWire `json:"rows"`
	Notes  []string          `json:"notes"`
}

func (d Distribution) wire() distributionWire {
	w := distributionWire{Exact: d.Exact, Censored: d.Censored, Samples: d.Samples(),
		Buckets: make([]bucketWire, len(d.Buckets)), Survival: make([]survivalWire, len(d.Survival))}
	for i, b := range d.Buckets {
		w.Buckets[i] = bucketWire{LowMS: ms(b.Low), HighMS: ms(b.High), Exact: b.Exact, Censored: b.Censored}
	}
	for i, s := range d.Survival {
		w.Survival[i] = survivalWire{MS: ms(s.At), Survival: s.S}
	}
	return w
}

func (w distributionWire) distribution() Distribution {
	d := Distribution{Exact: w.Exact, Censored: w.Censored}
	if len(w.Buckets) > 0 {
		d.Buckets = make([]DistBucket, len(w.Buckets))
	}
	for i, b := range w.Buckets {
		d.Buckets[i] = DistBucket{Low: fromMS(b.LowMS), High: fromMS(b.HighMS), Exact: b.Exact, Censored: b.Censored}
	}
	if len(w.Survival) > 0 {
		d.Survival = make([]SurvivalStep, len(w.Survival))
	}
	for i, s := range w.Survival {
		d.Survival[i] = SurvivalStep{At: fromMS(s.MS), S: s.Survival}
	}
	return d
}

func (h MethodHedgeSettings) wire() methodHedgeWire {
	return methodHedgeWire{Enabled: h.Enabled, DelayMS: ms(h.Delay), DelaySource: h.Source, Quantile: h.Quantile,
		MaxExtra: h.MaxExtra, Budget: h.Budget, BudgetBurst: h.BudgetBurst, BudgetCap: h.BudgetCap, LagMS: ms(h.Lag)}
}

// MarshalJSON writes the distribution as GET /v1/methods/{method}/distribution shows it.
func (md MethodDistribution) MarshalJSON() ([]byte, error) {
	h := md.Hedge
	w := methodDistributionWire{Method: md.Method, Window: md.Window.String(), WindowS: md.Window.Seconds(),
		distributionWire: md.Primary.wire(), Untimed: md.Untimed, Targets: make([]targetWire, len(md.Targets)),
		Hedge: h.wire()}
	for i, t := range md.Targets {
		w.Targets[i] = targetWire{Endpoint: t.Endpoint, Hedges: t.Weight, distributionWire: t.Dist.wire()}
	}
	if t := md.Trial; t != nil {
		w.Trial = &trialWire{Since: t.Since, Enabled: t.Enabled, DelayMS: ms(t.Delay), DelaySource: t.DelaySource,
			PredictedMS: ms(t.Predicted), PredictedLow: ms(t.PredictedLow), PredictedHigh: ms(t.PredictedHigh), PredictedLowerBound: t.PredictedLowerBound,
			MeasuredMS: ms(t.Measured), MeasuredLow: ms(t.MeasuredLow), MeasuredHigh: ms(t.MeasuredHigh),
			Samples: t.Samples, Departs: t.Departs, HedgesFired: t.HedgesFired, BudgetRefused: t.BudgetRefused}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a distribution document (an attached console's).
func (md *MethodDistribution) UnmarshalJSON(b []byte) error {
	var w methodDistributionWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	window, _ := time.ParseDuration(w.Window)
	h := w.Hedge
	*md = MethodDistribution{Method: w.Method, Window: window, Primary: w.distributionWire.distribution(), Untimed: w.Untimed,
		Hedge: MethodHedgeSettings{Enabled: h.Enabled, Delay: fromMS(h.DelayMS), Source: h.DelaySource, Quantile: h.Quantile,
			MaxExtra: h.MaxExtra, Budget: h.Budget, BudgetBurst: h.BudgetBurst, BudgetCap: h.BudgetCap, Lag: fromMS(h.LagMS)}}
	for _, t := range w.Targets {
		md.Targets = append(md.Targets, HedgeTarget{Endpoint: t.Endpoint, Weight: t.Hedges, Dist: t.distributionWire.distribution()})
	}
	if t := w.Trial; t != nil {
		md.Trial = &HedgeTrial{Since: t.Since, Enabled: t.Enabled, Delay: fromMS(t.DelayMS), DelaySource: t.DelaySource,
			Predicted: fromMS(t.PredictedMS), PredictedLow: fromMS(t.PredictedLow), PredictedHigh: fromMS(t.PredictedHigh), PredictedLowerBound: t.PredictedLowerBound,
			Measured: fromMS(t.MeasuredMS), MeasuredLow: fromMS(t.MeasuredLow), MeasuredHigh: fromMS(t.MeasuredHigh),
			Samples: t.Samples, Departs: t.Departs, HedgesFired: t.HedgesFired, BudgetRefused: t.BudgetRefused}
	}
	return nil
}

// MarshalJSON writes the report as GET /v1/hedge/forecast shows it.
func (r ForecastReport) MarshalJSON() ([]byte, error) {
	w := forecastReportWire{Method: r.Method, Rows: make([]forecastRowWire, len(r.Rows)), Notes: r.Notes}
	if w.Notes == nil {
		w.Notes = []string{}
	}
	for i, f := range r.Rows {
		w.Rows[i] = forecastRowWire{DelayMS: ms(f.Delay), FireRate: f.FireRate, P50MS: ms(f.P50), P95MS: ms(f.P95),
			P99MS: ms(f.P99), P999MS: ms(f.P999), ExtraLoad: f.ExtraLoad, BudgetCapped: f.BudgetCapped, Samples: f.Samples,
			LowerBounds: lowerBoundNames(f.Open[:], percentileFields[:])}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a forecast document: the wire's fields only (what
// the cap leaves stays behind).
func (r *ForecastReport) UnmarshalJSON(b []byte) error {
	var w forecastReportWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ForecastReport{Method: w.Method, Notes: w.Notes}
	for _, f := range w.Rows {
		row := HedgeForecast{Delay: fromMS(f.DelayMS), FireRate: f.FireRate, P50: fromMS(f.P50MS), P95: fromMS(f.P95MS),
			P99: fromMS(f.P99MS), P999: fromMS(f.P999MS), ExtraLoad: f.ExtraLoad, BudgetCapped: f.BudgetCapped, Samples: f.Samples}
		openFromNames(f.LowerBounds, percentileFields[:], row.Open[:])
		r.Rows = append(r.Rows, row)
	}
	return nil
}
