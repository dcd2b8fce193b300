package engine

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// The hedge tuning view's data: a method's live distribution with where
// its hedges go, and the forecast for candidate delays. The console, the
// admin API and bench all predict through Forecast.

// MethodDistribution is one hedgeable method's picture: its primaries'
// latency over the stats window, the endpoints its hedges went to, its
// hedging now and, after a live change, how the change is doing.
type MethodDistribution struct {
	Method  string
	Window  time.Duration // server.stats_window
	Primary Distribution
	// Untimed are the primaries over the window counted but not in
	// Primary: rpcdash lost at least half of their time to its own
	// slowness, so their latency is its own, not the endpoint's.
	Untimed int64
	// Targets are the endpoints that took the method's hedges over the
	// window (routable now), weighted by how many; each with its own
	// latency for the method. Empty: the model sends the duplicates to the
	// primaries' distribution.
	Targets []HedgeTarget
	Hedge   MethodHedgeSettings
	Trial   *HedgeTrial // since the last live change of its hedging; nil if none
}

// MethodHedgeSettings are the hedging settings in force for a method.
type MethodHedgeSettings struct {
	Enabled     bool
	Delay       time.Duration // in force now (the auto estimate when auto)
	Source      string        // "auto", "cold", "config" or "live"
	Quantile    float64       // the auto delay's
	MaxExtra    int
	Budget      float64
	BudgetBurst float64 // hedge.budget_burst, as the status's budget_burst
	BudgetCap   float64 // what the budget may hold now (the burst plus its last 10 s of deposits), as the status's budget_cap
	// Lag is how late hedges have gone out after their delay lately
	// (hedgelag.go), the forecast's.
	Lag time.Duration
}

// Holds is what the budget may hold now, the forecast's burst: the cap, and
// never less than the configured burst.
func (s MethodHedgeSettings) Holds() float64 { return max(s.BudgetCap, s.BudgetBurst) }

// errNotHedged is the error for a method that is never hedged.
var errNotHedged = errors.New("never hedged")

// notHedged is the 400 for a method that is never hedged, the same from
// every admin call: "method: eth_sendRawTransaction is a write: never
// hedged"; nil when the method may be hedged.
func (e *Engine) notHedged(method string) error {
	if why := e.methods.WhyNotHedged(method); why != "" {
		return fmt.Errorf("method: %s %s: %w", method, why, errNotHedged)
	}
	return nil
}

// MethodDistribution copies the method's distributions (each under its
// window's lock) and settings. A hedgeable method without traffic yet has
// empty distributions; one that is never hedged is an error.
func (e *Engine) MethodDistribution(method string) (MethodDistribution, error) {
	if err := validMethodName(method); err != nil {
		return MethodDistribution{}, err
	}
	if err := e.notHedged(method); err != nil {
		return MethodDistribution{}, err
	}
	key, hm := e.hedge.lookup(method)
	d := e.hedge.delayFor(key)
	st := e.hedge.status()
	md := MethodDistribution{Method: key, Window: e.cfg.Server.StatsWindow,
		Hedge: MethodHedgeSettings{Enabled: d.Enabled, Delay: d.Delay, Source: d.Source, Quantile: d.Quantile,
			MaxExtra: st.MaxExtra, Budget: st.Budget, BudgetBurst: st.BudgetBurst, BudgetCap: st.BudgetCap, Lag: e.hedge.lag.mean()}}
	if hm != nil {
		md.Primary = distributionOf(hm.primaries)
		md.Untimed = hm.untimed.Totals().Attempts
	}
	if d.Source == "auto" {
		// From the copy just taken, so that the delay and the distribution
		// it is drawn on agree (the window may have moved since delayFor).
		md.Hedge.Delay = e.autoDelay(key, md.Primary, d.Quantile)
	}
	md.Targets = e.hedgeTargets(key)
	md.Trial = e.trials.get(key)
	return md, nil
}

// lookup finds a method's hedging state by its name as clients send it,
// exactly or else ignoring case; it never creates one.
func (h *hedger) lookup(method string) (string, *hedgeMethod) {
	if hm, ok := h.methods.lookup(method); ok {
		return method, hm
	}
	for k, hm := range h.methods.all() {
		if strings.EqualFold(k, method) {
			return k, hm
		}
	}
	return method, nil
}

// hedgeTargets are the routable endpoints that took hedges of method over
// the stats window, weighted by their count.
func (e *Engine) hedgeTargets(method string) []HedgeTarget {
	now := e.now()
	var out []HedgeTarget
	for _, ep := range e.endpoints {
		st, ok := ep.methods.lookup(method)
		if !ok || !e.routable(ep, now) {
			continue
		}
		if n := st.rates.Totals().Hedges; n > 0 {
			out = append(out, HedgeTarget{Endpoint: ep.Name, Weight: float64(n), Dist: distributionOf(st.latency)})
		}
	}
	return out
}

// forecastInput is the forecast's input for md at delay; not hedged when
// the method's hedging is off.
func (md MethodDistribution) forecastInput(delay time.Duration, hedged bool) ForecastInput {
	in := ForecastInput{Primary: md.Primary, Targets: md.Targets, Delay: delay, Budget: md.Hedge.Budget, Burst: md.Hedge.Holds()}
	if hedged {
		in.MaxExtra, in.Lag = md.Hedge.MaxExtra, md.Hedge.Lag
	}
	return in
}

// ForecastReport is the model's prediction for each candidate delay of a
// method, in the order asked, with what the reader should know about it.
type ForecastReport struct {
	Method string
	Rows   []HedgeForecast
	Notes  []string
}

// defaultForecastDelays are the candidates when none are asked for.
var defaultForecastDelays = []string{"current", "auto:0.8", "auto:0.9", "auto:0.95", "auto:0.99"}

// maxForecastDelays bounds the candidates of one forecast request.
const maxForecastDelays = 32

// HedgeForecast predicts hedging of method at each delay of delays: a
// duration ("90ms", "0s": at once), "auto" (the method's auto delay now),
// "auto:Q" (the auto delay at quantile Q), "current" (the delay in force,
// not hedged if hedging is off for the method) or "off" (not hedged: the
// baseline a delay's p99 is weighed against).
func (e *Engine) HedgeForecast(method string, delays []string) (ForecastReport, error) {
	md, err := e.MethodDistribution(method)
	if err != nil {
		return ForecastReport{}, err
	}
	if len(delays) == 0 {
		delays = defaultForecastDelays
	}
	if len(delays) > maxForecastDelays {
		return ForecastReport{}, fmt.Errorf("delays: at most %d, got %d", maxForecastDelays, len(delays))
	}
	rep := ForecastReport{Method: md.Method}
	targets := md.Targets
	if len(targets) > 1 {
		// Mixed once for every row, not once per row.
		md.Targets = []HedgeTarget{{Endpoint: "mixture", Weight: 1, Dist: Distribution{Survival: mixture(md.Primary, targets)}}}
	}
	for _, spec := range delays {
		d, hedged, err := e.candidateDelay(md, spec)
		if err != nil {
			return ForecastReport{}, err
		}
		rep.Rows = append(rep.Rows, Forecast(md.forecastInput(d, hedged)))
	}
	md.Targets = targets
	rep.Notes = e.forecastNotes(md, rep.Rows)
	return rep, nil
}

// candidateDelay resolves one delay of a forecast request.
func (e *Engine) candidateDelay(md MethodDistribution, spec string) (time.Duration, bool, error) {
	s := strings.TrimSpace(spec)
	switch {
	case s == "current":
		return md.Hedge.Delay, md.Hedge.Enabled, nil
	case s == "off":
		return 0, false, nil
	case s == "auto":
		return e.autoDelay(md.Method, md.Primary, md.Hedge.Quantile), true, nil
	case strings.HasPrefix(s, "auto:"):
		q, err := strconv.ParseFloat(strings.TrimPrefix(s, "auto:"), 64)
		if err != nil || !(q > 0 && q < 1) {
			return 0, false, fmt.Errorf("delays: %q: the quantile of auto:Q must be between 0 and 1", redact.Sanitize(spec, 64))
		}
		return e.autoDelay(md.Method, md.Primary, q), true, nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("delays: %q is not a delay (a duration such as 90ms, auto, auto:0.9, current or off)", redact.Sanitize(spec, 64))
	case d < 0:
		return 0, false, fmt.Errorf("delays: %s is negative", d)
	}
	if err := checkMethodDelay(d, md.Method, e.requestTimeout(md.Method), e.cfg.Server.RequestTimeout); err != nil {
		return 0, false, fmt.Errorf("delays: %v", err)
	}
	return d, true, nil
}

// autoDelay is what the auto delay at quantile q is for method's
// distribution p: the hedger's rule (delayFor: clamped to [min_delay, the
// method's max_delay], below min_samples cold_delay or the few answers'
// quantile when that is longer).
func (e *Engine) autoDelay(method string, p Distribution, q float64) time.Duration {
	h := e.cfg.Hedge
	most := e.hedge.maxDelayFor(method)
	if p.Samples() < int64(h.MinSamples) {
		if p.Exact == 0 {
			return h.ColdDelay
		}
		few, _ := p.Quantile(q)
		return max(h.ColdDelay, min(few, most))
	}
	v, _ := p.DelayQuantile(q)
	return min(max(v, h.MinDelay), most)
}

// NoteLowerBounds is the forecast's note when a row has a percentile that
// censoring leaves a lower bound (a reader showing only some percentiles
// may say it of those instead).
const NoteLowerBounds = "censoring ends the data before some percentiles: those figures are lower bounds"

// noteThinTail is the forecast's note when a figure rests on too few
// answers (HedgeForecast.Thin).
const noteThinTail = "hedges cut most slow primaries short: too few answers are left past some figures to place them, each is the low end of its 95 % interval (a lower bound)"

// forecastNotes say what the forecast rests on and where it is weak.
func (e *Engine) forecastNotes(md MethodDistribution, rows []HedgeForecast) []string {
	var notes []string
	n := md.Primary.Samples()
	switch {
	case n == 0:
		return []string{"no primaries of " + md.Method + " in the window yet: nothing to forecast from"}
	case n < int64(e.cfg.Hedge.MinSamples):
		notes = append(notes, fmt.Sprintf("only %d primaries in the window: the forecast is rough", n))
	}
	if len(md.Targets) == 0 {
		notes = append(notes, "no hedges sent in the window: duplicates are modelled on the primaries' distribution")
	}
	if md.Hedge.MaxExtra == 0 {
		notes = append(notes, "hedge.max_extra is 0: nothing is ever hedged")
	}
	if h, dominated := md.Primary.Horizon(); dominated {
		notes = append(notes, fmt.Sprintf("censoring dominates past %s (most primaries cut short by hedges before it, too few answers after): figures past it are lower bounds, and auto picks no delay past it",
			roundShown(h)))
	}
	if slices.ContainsFunc(rows, func(f HedgeForecast) bool { return f.Thin != [4]bool{} }) {
		notes = append(notes, noteThinTail)
	}
	open := slices.ContainsFunc(rows, func(f HedgeForecast) bool { return f.Open != [4]bool{} })
	if open {
		notes = append(notes, NoteLowerBounds)
	}
	if shared := e.sharedFate(); shared != "" {
		notes = append(notes, "endpoints are not independent ("+shared+"): the model is optimistic")
	}
	return notes
}

// sharedFate describes the independence warnings that mean endpoints
// share fate, "" if none.
func (e *Engine) sharedFate() string {
	var parts []string
	for _, w := range e.poolWarnings() {
		if w.Reason == "asn-unknown" || w.Reason != "pool" && len(w.Endpoints) < 2 {
			continue
		}
		parts = append(parts, w.Text)
	}
	return strings.Join(parts, "; ")
}

// validMethodName checks a method name taken from the admin API or a key.
func validMethodName(m string) error {
	if m == "" {
		return fmt.Errorf("method: required")
	}
	if len(m) > maxMethodName || redact.Sanitize(m, maxMethodName) != m || strings.ContainsAny(m, " \"/") {
		return fmt.Errorf("method: %q is not a JSON-RPC method name", redact.Sanitize(m, 64))
	}
	return nil
}
