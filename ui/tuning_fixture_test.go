package ui

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// A fixed tuning view: the seeds' tail scenario (median 50 ms, σ 0.3, 2 %
// at 500–1000 ms), 5000 primaries from a fixed seed, the slow ones cut
// short by hedges sent at the p95 (censored), one hedge target.

func tuningDistribution() engine.MethodDistribution {
	r := rand.New(rand.NewPCG(12, 1))
	draw := func() time.Duration {
		if r.Float64() < 0.02 {
			return 500*time.Millisecond + time.Duration(r.Int64N(int64(500*time.Millisecond)))
		}
		return time.Duration(float64(50*time.Millisecond) * math.Exp(0.3*r.NormFloat64()))
	}
	const delay = 88 * time.Millisecond
	var exact, censored []time.Duration
	for range 5000 {
		x := draw()
		if x > delay {
			if won := delay + draw(); won < x {
				censored = append(censored, won)
				continue
			}
		}
		exact = append(exact, x)
	}
	p := engine.DistributionOf(exact, censored)
	auto, _ := p.DelayQuantile(0.95)
	return engine.MethodDistribution{Method: "eth_getBalance", Window: 5 * time.Minute, Primary: p,
		Targets: []engine.HedgeTarget{{Endpoint: "infura", Weight: 180, Dist: p}},
		Hedge:   engine.MethodHedgeSettings{Enabled: true, Delay: auto, Source: "auto", Quantile: 0.95, MaxExtra: 1, Budget: 0.1, BudgetBurst: 10}}
}

// forecastRows are the view's rows for md as an engine would forecast
// them.
func forecastRows(md engine.MethodDistribution) []tuningRow {
	rows := tuningCandidates(md)
	fs := make([]engine.HedgeForecast, len(rows))
	for i, r := range rows {
		fs[i] = forecastOne(md, r.spec)
	}
	return mergeRows(rows, fs, md.Hedge.Enabled)
}

// forecastOne is the forecast at one candidate delay, resolved as
// engine.HedgeForecast resolves it.
func forecastOne(md engine.MethodDistribution, spec string) engine.HedgeForecast {
	d, hedged := md.Hedge.Delay, md.Hedge.Enabled
	switch {
	case strings.HasPrefix(spec, "auto:"):
		q, _ := strconv.ParseFloat(strings.TrimPrefix(spec, "auto:"), 64)
		d, _ = md.Primary.DelayQuantile(q)
		d, hedged = max(d, 5*time.Millisecond), true
	case spec == "off":
		d, hedged = 0, false
	case spec != "current":
		d, _ = time.ParseDuration(spec)
		hedged = true
	}
	in := engine.ForecastInput{Primary: md.Primary, Targets: md.Targets, Delay: d, Budget: md.Hedge.Budget, Burst: md.Hedge.Holds()}
	if hedged {
		in.MaxExtra = md.Hedge.MaxExtra
	}
	return engine.Forecast(in)
}

// tuningModel is a console at w×h with the tuning view of md open.
func tuningModel(snap engine.Snapshot, md engine.MethodDistribution, w, h int) Model {
	m := fixedModel(snap, themes.Default(), w, h)
	m.overlay = overlayTuning
	m.tuning = tuningView{method: md.Method, dist: md, rows: forecastRows(md), have: true, fetchedAt: fixedNow()}
	return m
}

// withTrial is md after a live change 80 s ago to 120 ms, predicted and
// measured.
func withTrial(md engine.MethodDistribution, departs bool) engine.MethodDistribution {
	md.Hedge.Delay, md.Hedge.Source = 120*time.Millisecond, "live"
	ms := time.Millisecond
	md.Trial = &engine.HedgeTrial{Since: t0.Add(-80 * time.Second), Enabled: true, Delay: 120 * ms, DelaySource: "live",
		Predicted: 170 * ms, PredictedLow: 163 * ms, PredictedHigh: 178 * ms,
		Measured: 174 * ms, MeasuredLow: 166 * ms, MeasuredHigh: 183 * ms, Samples: 2345}
	if departs {
		md.Trial.Measured, md.Trial.MeasuredLow, md.Trial.MeasuredHigh, md.Trial.Departs = 610*ms, 540*ms, 690*ms, true
	}
	return md
}
