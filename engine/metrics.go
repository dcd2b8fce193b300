package engine

import (
	"math"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// metrics exports the engine to Prometheus. Counters that the engine keeps
// anyway (accounting, endpoint state) are read at scrape time from a
// Snapshot, so there is one source of truth; only what has no other home
// (per-attempt outcomes, request durations) is a Prometheus vector.
// Method labels are bounded: past maxTrackedMethods they read "other".
type metrics struct {
	e        *Engine
	reg      *prometheus.Registry
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	release  prometheus.Histogram
	shadows  *prometheus.CounterVec
}

func newMetrics(e *Engine) *metrics {
	m := &metrics{e: e, reg: prometheus.NewRegistry()}
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rpcdash_attempts_total", Help: "Upstream attempts by endpoint, method, role (primary, hedge, failover) and outcome.",
	}, []string{"endpoint", "method", "role", "outcome"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rpcdash_request_duration_seconds", Help: "Client-facing request latency through rpcdash.",
		Buckets: []float64{.005, .01, .025, .05, .075, .1, .15, .25, .5, .75, 1, 2.5, 5, 10},
	}, []string{"method", "class", "outcome"})
	m.release = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "rpcdash_cancel_release_seconds", Help: "Time from cancelling a losing attempt to its release.",
		Buckets: []float64{.0001, .0005, .001, .005, .01, .05, .1, .5},
	})
	m.shadows = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rpcdash_shadow_compared_total", Help: "Shadow mirrors by endpoint and outcome (match, mismatch, tip, error, dropped).",
	}, []string{"endpoint", "outcome"})
	m.reg.MustRegister(m.attempts, m.duration, m.release, m.shadows, stateCollector{e},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// attempt counts n attempts alike (one, or an upstream batch's calls).
func (m *metrics) attempt(endpoint, label string, role role, outcome string, n int) {
	m.attempts.WithLabelValues(endpoint, label, role.String(), outcome).Add(float64(n))
}

func (m *metrics) shadow(endpoint, outcome string) {
	m.shadows.WithLabelValues(endpoint, outcome).Inc()
}

// requests observes n requests of one series that took d each.
func (m *metrics) requests(label string, cls jsonrpc.Class, out clientOutcome, d time.Duration, n int64) {
	o, s := m.duration.WithLabelValues(label, cls.String(), out.String()), d.Seconds()
	for range n {
		o.Observe(s)
	}
}

var (
	descUp        = prometheus.NewDesc("rpcdash_endpoint_routable", "1 when the endpoint can take new traffic (shadows, which never answer clients, have no series).", []string{"endpoint"}, nil)
	descBreaker   = prometheus.NewDesc("rpcdash_endpoint_breaker_state", "1 for the breaker's current state.", []string{"endpoint", "state"}, nil)
	descDrained   = prometheus.NewDesc("rpcdash_endpoint_drained", "1 when drained by an operator.", []string{"endpoint"}, nil)
	descInflight  = prometheus.NewDesc("rpcdash_endpoint_in_flight", "Attempts in flight.", []string{"endpoint"}, nil)
	descHead      = prometheus.NewDesc("rpcdash_endpoint_head", "Last head height seen.", []string{"endpoint"}, nil)
	descLag       = prometheus.NewDesc("rpcdash_endpoint_head_lag", "Blocks or slots behind the pool's highest head.", []string{"endpoint"}, nil)
	descLatency   = prometheus.NewDesc("rpcdash_endpoint_latency_seconds", "Rolling-window latency of attempts: answers, and attempts cut short when another won counted as longer than they ran (Kaplan-Meier). Where rpcdash_endpoint_latency_lower_bound is 1 the figure is a lower bound; NaN when the window holds no attempt.", []string{"endpoint", "quantile"}, nil)
	descLatBound  = prometheus.NewDesc("rpcdash_endpoint_latency_lower_bound", "1 when censoring (attempts cut short when another won) leaves that rpcdash_endpoint_latency_seconds quantile only a lower bound.", []string{"endpoint", "quantile"}, nil)
	descErrRate   = prometheus.NewDesc("rpcdash_endpoint_error_rate", "Rolling-window failure share of attempts; NaN when the window holds none.", []string{"endpoint"}, nil)
	descFault     = prometheus.NewDesc("rpcdash_endpoint_fault", "1 while a fault is injected.", []string{"endpoint", "mode"}, nil)
	descLosers    = prometheus.NewDesc("rpcdash_cancelled_losers_total", "Attempts cancelled because another won.", []string{"endpoint"}, nil)
	descLoserTime = prometheus.NewDesc("rpcdash_loser_upstream_seconds_total", "Upstream time consumed by cancelled losers.", []string{"endpoint"}, nil)
	descRequests  = prometheus.NewDesc("rpcdash_client_requests_total", "Client requests by method.", []string{"method"}, nil)
	descFired     = prometheus.NewDesc("rpcdash_hedges_fired_total", "Hedges sent.", []string{"method"}, nil)
	descWon       = prometheus.NewDesc("rpcdash_hedges_won_total", "Hedges that answered first.", []string{"method"}, nil)
	descRefused   = prometheus.NewDesc("rpcdash_hedges_refused_total", "Requests whose hedge fell due and was not sent then, by reason (budget, max_outstanding, paused, queue, late, rate_limited, no_endpoint, untracked), once per request and reason.", []string{"method", "reason"}, nil)
	descCost      = prometheus.NewDesc("rpcdash_hedge_extra_cost_units_total", "Cost units added by hedges.", []string{"method"}, nil)
	descAmp       = prometheus.NewDesc("rpcdash_amplification", "Upstream attempts per client request.", []string{"method"}, nil)
	descDelay     = prometheus.NewDesc("rpcdash_hedge_delay_seconds", "Current hedge delay and its source.", []string{"method", "source"}, nil)
	descPaused    = prometheus.NewDesc("rpcdash_hedge_paused", "1 while the saturation guard pauses hedging.", nil, nil)
	descTokens    = prometheus.NewDesc("rpcdash_hedge_budget_tokens", "Hedge budget balance in cost units.", nil, nil)
	descBudgetCap = prometheus.NewDesc("rpcdash_hedge_budget_cap", "What the hedge budget may hold now: budget_burst plus the last 10 s of deposits, in cost units.", nil, nil)
	descClientIn  = prometheus.NewDesc("rpcdash_in_flight_requests", "Client requests being served.", nil, nil)
	descInfo      = prometheus.NewDesc("rpcdash_endpoint_info", "Endpoint labels: failure domain, provider, region.", []string{"endpoint", "domain", "provider", "region"}, nil)
	descWarnings  = prometheus.NewDesc("rpcdash_pool_warnings", "Independence warnings about the pool.", nil, nil)
	descEpFired   = prometheus.NewDesc("rpcdash_endpoint_hedges_total", "Hedges sent to the endpoint.", []string{"endpoint"}, nil)
	descEpWon     = prometheus.NewDesc("rpcdash_endpoint_hedges_won_total", "Hedges the endpoint won.", []string{"endpoint"}, nil)
)

// latencyQuantiles label rpcdash_endpoint_latency_seconds and _lower_bound:
// every percentile of the status's latency.
var latencyQuantiles = [...]string{PctP50: "0.5", PctP90: "0.9", PctP95: "0.95", PctP99: "0.99", PctP999: "0.999"}

type stateCollector struct{ e *Engine }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descBreaker, descDrained, descInflight, descHead, descLag, descLatency, descLatBound,
		descErrRate, descFault, descLosers, descLoserTime, descRequests, descFired, descWon, descRefused, descCost, descAmp, descDelay,
		descPaused, descTokens, descBudgetCap, descClientIn, descInfo, descWarnings, descEpFired, descEpWon} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.e.Snapshot()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for _, ep := range s.Endpoints {
		if ep.Role != RoleShadow {
			// A shadow never answers a client: a 0 here would read as an
			// endpoint down to every "routable == 0" alert.
			gauge(descUp, b2f(ep.Routable), ep.Name)
		}
		for _, st := range []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen} {
			gauge(descBreaker, b2f(ep.Breaker.State == st), ep.Name, st.String())
		}
		gauge(descDrained, b2f(ep.Drained), ep.Name)
		gauge(descInflight, float64(ep.InFlight), ep.Name)
		gauge(descHead, float64(ep.Head), ep.Name)
		gauge(descLag, float64(ep.Lag), ep.Name)
		for i, label := range latencyQuantiles {
			gauge(descLatency, orNaN(ep.Latency.Count+ep.Latency.Censored > 0, ep.Latency.Percentile(i).Seconds()), ep.Name, label)
			gauge(descLatBound, b2f(ep.Latency.LowerBound(i)), ep.Name, label)
		}
		gauge(descErrRate, orNaN(ep.Rates.Verdicts() > 0, ep.Rates.ErrorRate), ep.Name)
		if ep.Fault != nil {
			gauge(descFault, 1, ep.Name, string(ep.Fault.Mode))
		}
		counter(descLosers, float64(ep.Accounting.Losers), ep.Name)
		counter(descEpFired, float64(ep.Accounting.HedgesFired), ep.Name)
		counter(descEpWon, float64(ep.Accounting.HedgesWon), ep.Name)
		gauge(descInfo, 1, ep.Name, ep.Domain, ep.Provider, ep.Region)
		counter(descLoserTime, ep.Accounting.LoserTime.Seconds(), ep.Name)
	}
	for m, a := range s.Methods {
		counter(descRequests, float64(a.Requests), m)
		counter(descFired, float64(a.HedgesFired), m)
		counter(descWon, float64(a.HedgesWon), m)
		for why, n := range a.HedgesRefused {
			counter(descRefused, float64(n), m, why)
		}
		counter(descCost, a.ExtraCost, m)
		gauge(descAmp, a.Amplification, m)
		if a.Hedge != nil {
			gauge(descDelay, a.Hedge.Delay.Seconds(), m, a.Hedge.DelaySource)
		}
	}
	gauge(descPaused, b2f(s.Hedge.Paused))
	gauge(descTokens, s.Hedge.BudgetTokens)
	gauge(descBudgetCap, s.Hedge.BudgetCap)
	gauge(descClientIn, float64(s.InFlight))
	gauge(descWarnings, float64(len(s.Warnings)))
}

// orNaN is v when there is data behind it, else NaN: what Prometheus's own
// summaries give an empty quantile, so a dashboard draws a gap, not a 0.
func orNaN(hasData bool, v float64) float64 {
	if !hasData {
		return math.NaN()
	}
	return v
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
