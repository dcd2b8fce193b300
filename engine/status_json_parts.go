package engine

import (
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// Conversions between the Snapshot's parts and their wire shape (see
// status_json.go).

func (es EndpointSnapshot) wire() endpointWire {
	w := endpointWire{Name: es.Name, URL: es.URL, Proxy: es.Proxy, Provider: es.Provider, Region: es.Region, Domain: es.Domain, Role: es.Role,
		Routable: es.Routable, Drained: es.Drained, Refusing: es.Refusing, Breaker: breakerOut(es.Breaker), BackoffUntil: timePtr(es.BackoffUntil),
		InFlight: es.InFlight, Latency: latencyOut(es.Latency), Rates: rateWire(es.Rates), Head: es.Head, HeadSeenAt: timePtr(es.HeadSeenAt), Lag: es.Lag,
		LagExcluded: es.LagExcluded, LagInSync: es.LagInSync, LagRecoverNeed: es.LagRecoverNeed, LagFlaps: es.LagFlaps, Exclusions: nonNil(es.Exclusions), LastError: es.LastError, LastErrorAt: timePtr(es.LastErrorAt),
		Accounting: accountOut(es.Accounting), Independence: es.Independence, Score: scoreOut(es.Score),
		Series: make([]seriesWire, 0, len(es.Series)), Share: es.Share, Shadow: shadowOut(es.Shadow),
		BatchPaceMS: ms(es.BatchPace), BatchTrips: es.BatchRoundTrips,
		Errors: make([]errorWire, 0, len(es.Errors)), Methods: make(map[string]epMethodWire, len(es.Methods))}
	if f := es.Fault; f != nil {
		w.Fault = &faultWire{Mode: f.Mode, Rate: f.Rate, Latency: Duration(f.Latency), Duration: Duration(f.Duration),
			RetryAfter: Duration(f.RetryAfter), Since: f.Since, Expires: timePtr(f.Expires)}
	}
	for _, e := range es.Errors {
		w.Errors = append(w.Errors, errorWire(e))
	}
	for m, st := range es.Methods {
		w.Methods[m] = epMethodWire{Latency: latencyOut(st.Latency), Rates: rateWire(st.Rates),
			AttemptTimeoutMS: ms(st.AttemptTimeout), AttemptTimeoutSource: st.AttemptTimeoutSource,
			Overdue: st.Overdue, LateAnswers: st.LateAnswers, BackoffUntil: timePtr(st.BackoffUntil),
			CannotServeUntil: timePtr(st.CannotServeUntil), HungUntil: timePtr(st.HungUntil), Score: scoreOut(st.Score)}
	}
	for _, p := range es.Series {
		w.Series = append(w.Series, seriesWire{Start: p.Start, Requests: p.Requests, Failures: p.Failures,
			Answers: p.Answers, MeanRTTMS: ms(p.MeanRTT), MaxRTTMS: ms(p.MaxRTT)})
	}
	return w
}

func (w endpointWire) snapshot() EndpointSnapshot {
	es := EndpointSnapshot{Name: w.Name, URL: w.URL, Proxy: w.Proxy, Provider: w.Provider, Region: w.Region, Domain: w.Domain, Role: w.Role,
		Routable: w.Routable, Drained: w.Drained, Refusing: w.Refusing, Breaker: breakerIn(w.Breaker), BackoffUntil: timeOf(w.BackoffUntil),
		InFlight: w.InFlight, Latency: latencyIn(w.Latency), Rates: RateStats(w.Rates), Head: w.Head, HeadSeenAt: timeOf(w.HeadSeenAt), Lag: w.Lag,
		LagExcluded: w.LagExcluded, LagInSync: w.LagInSync, LagRecoverNeed: w.LagRecoverNeed, LagFlaps: w.LagFlaps, LastError: w.LastError, LastErrorAt: timeOf(w.LastErrorAt),
		Accounting: accountIn(w.Accounting), Independence: w.Independence, Score: scoreIn(w.Score),
		Share: w.Share, Shadow: w.Shadow.snapshot(), BatchPace: fromMS(w.BatchPaceMS), BatchRoundTrips: w.BatchTrips}
	if len(w.Exclusions) > 0 {
		es.Exclusions = w.Exclusions
	}
	if f := w.Fault; f != nil {
		es.Fault = &FaultInfo{Mode: f.Mode, Rate: f.Rate, Latency: f.Latency.D(), Duration: f.Duration.D(),
			RetryAfter: f.RetryAfter.D(), Since: f.Since, Expires: timeOf(f.Expires)}
	}
	for _, e := range w.Errors {
		es.Errors = append(es.Errors, EndpointError(e))
	}
	if len(w.Methods) > 0 {
		es.Methods = make(map[string]MethodSnapshot, len(w.Methods))
		for m, mw := range w.Methods {
			es.Methods[m] = MethodSnapshot{Latency: latencyIn(mw.Latency), Rates: RateStats(mw.Rates),
				AttemptTimeout: fromMS(mw.AttemptTimeoutMS), AttemptTimeoutSource: mw.AttemptTimeoutSource,
				Overdue: mw.Overdue, LateAnswers: mw.LateAnswers, BackoffUntil: timeOf(mw.BackoffUntil),
				CannotServeUntil: timeOf(mw.CannotServeUntil), HungUntil: timeOf(mw.HungUntil), Score: scoreIn(mw.Score)}
		}
	}
	if w.Series != nil {
		es.Series = make([]SeriesPoint, 0, len(w.Series))
	}
	for _, p := range w.Series {
		es.Series = append(es.Series, SeriesPoint{Start: p.Start, Requests: p.Requests, Failures: p.Failures,
			Answers: p.Answers, MeanRTT: fromMS(p.MeanRTTMS), MaxRTT: fromMS(p.MaxRTTMS)})
	}
	return es
}

func breakerOut(b BreakerSnapshot) breakerWire {
	return breakerWire{State: b.State.String(), ConsecutiveFailures: b.ConsecutiveFailures, TrialSuccesses: b.TrialSuccesses,
		Cooldown: b.Cooldown.String(), CooldownMS: ms(b.Cooldown), OpenedAt: timePtr(b.OpenedAt),
		NextTrialAt: timePtr(b.NextTrialAt), Reopens: b.Reopens, Flaps: b.Flaps, HeldClosed: b.HeldClosed}
}

func breakerIn(w breakerWire) BreakerSnapshot {
	b := BreakerSnapshot{State: parseBreakerState(w.State), ConsecutiveFailures: w.ConsecutiveFailures,
		TrialSuccesses: w.TrialSuccesses, Cooldown: fromMS(w.CooldownMS), OpenedAt: timeOf(w.OpenedAt),
		NextTrialAt: timeOf(w.NextTrialAt), Reopens: w.Reopens, Flaps: w.Flaps, HeldClosed: w.HeldClosed}
	if d, err := time.ParseDuration(w.Cooldown); err == nil && w.CooldownMS == 0 {
		b.Cooldown = d // an engine from before cooldown_ms
	}
	return b
}

// parseBreakerState reads a state's name; an unknown one reads as open, the
// state that routes nothing to it.
func parseBreakerState(s string) breaker.State {
	for _, st := range []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen} {
		if st.String() == s {
			return st
		}
	}
	return breaker.Open
}

func latencyOut(l LatencyStats) latencyWire {
	return latencyWire{Count: l.Count, Censored: l.Censored, P50: ms(l.P50), P90: ms(l.P90), P95: ms(l.P95),
		P99: ms(l.P99), P999: ms(l.P999), Max: ms(l.Max), Mean: ms(l.Mean), LowerBounds: lowerBoundNames(l.Open[:], latencyFields[:])}
}

func latencyIn(w latencyWire) LatencyStats {
	l := LatencyStats{Count: w.Count, Censored: w.Censored, P50: fromMS(w.P50), P90: fromMS(w.P90), P95: fromMS(w.P95),
		P99: fromMS(w.P99), P999: fromMS(w.P999), Max: fromMS(w.Max), Mean: fromMS(w.Mean)}
	openFromNames(w.LowerBounds, latencyFields[:], l.Open[:])
	return l
}

// accountOut is the attempts' side of an accounting: the whole of an
// endpoint's (AccountSnapshot's Requests and ClientErrors are 0 for one).
func accountOut(a AccountSnapshot) accountWire {
	return accountWire{Primary: a.Primary, Hedge: a.Hedge, Failover: a.Failover, Failures: a.Failures,
		HedgesFired: a.HedgesFired, HedgesWon: a.HedgesWon, Losers: a.Losers, OutrunUnanswered: a.OutrunUnanswered, LoserTime: a.LoserTime.String(),
		LoserSeconds: a.LoserTime.Seconds(), MeanRelease: a.MeanRelease.String(), ExtraCost: a.ExtraCost,
		FireRate: a.FireRate, WinRate: a.WinRate, Amplification: a.Amplification}
}

func accountIn(w accountWire) AccountSnapshot {
	a := AccountSnapshot{Primary: w.Primary, Hedge: w.Hedge, Failover: w.Failover, Failures: w.Failures,
		HedgesFired: w.HedgesFired, HedgesWon: w.HedgesWon, Losers: w.Losers, OutrunUnanswered: w.OutrunUnanswered, ExtraCost: w.ExtraCost,
		FireRate: w.FireRate, WinRate: w.WinRate, Amplification: w.Amplification}
	a.LoserTime, _ = time.ParseDuration(w.LoserTime)
	a.MeanRelease, _ = time.ParseDuration(w.MeanRelease) // "" from an engine that left 0 out
	return a
}

func requestAccountOut(a AccountSnapshot) requestAccountWire {
	return requestAccountWire{Requests: a.Requests, accountWire: accountOut(a), ClientErrors: a.ClientErrors, ClientGone: a.ClientGone, HedgesRefused: a.HedgesRefused}
}

func requestAccountIn(w requestAccountWire) AccountSnapshot {
	a := accountIn(w.accountWire)
	a.Requests, a.ClientErrors, a.ClientGone, a.HedgesRefused = w.Requests, w.ClientErrors, w.ClientGone, w.HedgesRefused
	return a
}

func methodOut(m MethodStatus) methodWire {
	w := methodWire{requestAccountWire: requestAccountOut(m.AccountSnapshot), Class: m.Class.String(), Hedgeable: m.Hedgeable,
		Weight: m.Weight, RequestTimeout: ms(m.RequestTimeout), Client: clientOut(m.Client)}
	if m.Hedge != nil {
		h := *m.Hedge // a copy, which the wire's pointers point into
		delay, delayMS := h.Delay.String(), ms(h.Delay)
		w.HedgeDelay, w.HedgeDelaySrc, w.HedgeDelayMS, w.HedgeEnabled = &delay, &h.DelaySource, &delayMS, &h.Enabled
		w.OutstandingNow, w.OutstandingMax = &h.Outstanding, &h.OutstandingPeak
		w.HedgeQuantile = &h.Quantile
	}
	return w
}

func methodIn(w methodWire) MethodStatus {
	m := MethodStatus{AccountSnapshot: requestAccountIn(w.requestAccountWire), Class: parseClass(w.Class), Hedgeable: w.Hedgeable,
		Weight: w.Weight, RequestTimeout: fromMS(w.RequestTimeout), Client: clientIn(w.Client)}
	if w.HedgeEnabled != nil {
		m.Hedge = &MethodHedge{Enabled: *w.HedgeEnabled, Delay: fromMS(deref(w.HedgeDelayMS)), DelaySource: deref(w.HedgeDelaySrc),
			Quantile: deref(w.HedgeQuantile), Outstanding: deref(w.OutstandingNow), OutstandingPeak: deref(w.OutstandingMax)}
	}
	return m
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// nonNil is l, or an empty list for nil: the wire shows [] rather than
// null.
func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

func parseClass(s string) jsonrpc.Class {
	for _, c := range []jsonrpc.Class{jsonrpc.ClassRead, jsonrpc.ClassWrite, jsonrpc.ClassStateful} {
		if c.String() == s {
			return c
		}
	}
	return jsonrpc.ClassRead
}

func clientOut(c ClientStats) clientWire {
	return clientWire{Requests: c.Requests, Errors: c.Errors, Gone: c.Gone, PerSecond: c.PerSecond, P50: ms(c.P50), P95: ms(c.P95), P99: ms(c.P99),
		HedgesFired: c.HedgesFired, HedgesWon: c.HedgesWon, UpstreamAttempts: c.Upstream, FireRate: c.FireRate, WinRate: c.WinRate, Amplification: c.Amplification}
}

func clientIn(w clientWire) ClientStats {
	return ClientStats{Requests: w.Requests, Errors: w.Errors, Gone: w.Gone, PerSecond: w.PerSecond, P50: fromMS(w.P50), P95: fromMS(w.P95), P99: fromMS(w.P99),
		HedgesFired: w.HedgesFired, HedgesWon: w.HedgesWon, Upstream: w.UpstreamAttempts, FireRate: w.FireRate, WinRate: w.WinRate, Amplification: w.Amplification}
}

func (h HedgeStatus) wire() hedgeWire {
	return hedgeWire{Enabled: h.Enabled, Delay: FormatDelay(h.Delay), DelaySource: h.DelaySource, Quantile: h.Quantile, MaxExtra: h.MaxExtra, SameDomain: h.SameDomain,
		Budget: h.Budget, BudgetBurst: h.BudgetBurst, BudgetTokens: h.BudgetTokens, BudgetCap: h.BudgetCap, Paused: h.Paused, PauseReason: h.PauseReason,
		BudgetRequestTokens: h.BudgetRequestTokens, BudgetRequestCap: h.BudgetRequestCap,
		BatchDelayMS: ms(h.BatchDelay), BatchRoundTrips: h.BatchRoundTrips}
}

func (w hedgeWire) status() HedgeStatus {
	h := HedgeStatus{Enabled: w.Enabled, DelaySource: w.DelaySource, Quantile: w.Quantile, MaxExtra: w.MaxExtra, SameDomain: w.SameDomain,
		Budget: w.Budget, BudgetBurst: w.BudgetBurst, BudgetTokens: w.BudgetTokens, BudgetCap: w.BudgetCap, Paused: w.Paused, PauseReason: w.PauseReason,
		BudgetRequestTokens: w.BudgetRequestTokens, BudgetRequestCap: w.BudgetRequestCap,
		BatchDelay: fromMS(w.BatchDelayMS), BatchRoundTrips: w.BatchRoundTrips}
	h.Delay, _ = ParseDelay(w.Delay)
	return h
}

func scoreOut(p ScoreParts) scoreWire {
	return scoreWire{LatencyMS: ms(p.Latency), LatencySource: p.LatencySource, FailureRate: p.FailureRate,
		Attempts: p.Attempts, MinAttempts: p.MinAttempts, ErrorFactor: p.ErrorFactor, TailShare: p.TailShare, TailFactor: p.TailFactor, InFlight: p.InFlight, Concurrency: p.Concurrency, LoadFactor: p.LoadFactor, Lag: p.Lag,
		LagCostMS: ms(p.LagCost), CostMS: ms(p.Cost)}
}

func scoreIn(w scoreWire) ScoreParts {
	return ScoreParts{Latency: fromMS(w.LatencyMS), LatencySource: w.LatencySource, FailureRate: w.FailureRate,
		Attempts: w.Attempts, MinAttempts: w.MinAttempts, ErrorFactor: w.ErrorFactor, TailShare: w.TailShare, TailFactor: w.TailFactor, InFlight: w.InFlight, Concurrency: w.Concurrency, LoadFactor: w.LoadFactor, Lag: w.Lag,
		LagCost: fromMS(w.LagCostMS), Cost: fromMS(w.CostMS)}
}

// shadowWire is a shadow's comparison figures on the wire.
type shadowWire struct {
	Mirrored     int64               `json:"mirrored"`
	Compared     int64               `json:"compared"`
	Match        int64               `json:"match"`
	Mismatch     int64               `json:"mismatch"`
	Tip          int64               `json:"tip"`
	Errors       int64               `json:"errors"`
	Dropped      int64               `json:"dropped"`
	MatchRate    float64             `json:"match_rate"`
	P50MS        float64             `json:"p50_ms"`
	P95MS        float64             `json:"p95_ms"`
	PrimaryP50MS float64             `json:"primary_p50_ms"`
	PrimaryP95MS float64             `json:"primary_p95_ms"`
	Answered     int64               `json:"answered"` // the mirrors the percentiles are of (stats window)
	LastMismatch *shadowMismatchWire `json:"last_mismatch"`
}

type shadowMismatchWire struct {
	Method string    `json:"method"`
	At     time.Time `json:"at"`
}

func shadowOut(s *ShadowSnapshot) *shadowWire {
	if s == nil {
		return nil
	}
	w := &shadowWire{Mirrored: s.Mirrored, Compared: s.Compared, Match: s.Match, Mismatch: s.Mismatch, Tip: s.Tip,
		Errors: s.Errors, Dropped: s.Dropped, MatchRate: s.MatchRate, P50MS: ms(s.P50), P95MS: ms(s.P95),
		PrimaryP50MS: ms(s.PrimaryP50), PrimaryP95MS: ms(s.PrimaryP95), Answered: s.Answered}
	if m := s.LastMismatch; m != nil {
		w.LastMismatch = &shadowMismatchWire{Method: m.Method, At: m.At}
	}
	return w
}

func (w *shadowWire) snapshot() *ShadowSnapshot {
	if w == nil {
		return nil
	}
	s := &ShadowSnapshot{Mirrored: w.Mirrored, Compared: w.Compared, Match: w.Match, Mismatch: w.Mismatch, Tip: w.Tip,
		Errors: w.Errors, Dropped: w.Dropped, MatchRate: w.MatchRate, P50: fromMS(w.P50MS), P95: fromMS(w.P95MS),
		PrimaryP50: fromMS(w.PrimaryP50MS), PrimaryP95: fromMS(w.PrimaryP95MS), Answered: w.Answered}
	if m := w.LastMismatch; m != nil {
		s.LastMismatch = &ShadowMismatch{Method: m.Method, At: m.At}
	}
	return s
}
