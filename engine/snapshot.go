package engine

import (
	"time"
)

// Snapshot is an immutable deep copy of the engine's state, for the console,
// /v1/status and tests. Nothing in it aliases engine memory.
type Snapshot struct {
	Time      time.Time                  `json:"time"`
	Chain     string                     `json:"chain"`
	InFlight  int64                      `json:"in_flight"`
	Routable  int                        `json:"routable"`
	MaxHead   int64                      `json:"max_head"`
	MaxLag    int64                      `json:"max_head_lag"`
	Endpoints []EndpointSnapshot         `json:"endpoints"`
	Hedge     HedgeStatus                `json:"hedge"`
	Totals    AccountSnapshot            `json:"totals"`
	Methods   map[string]AccountSnapshot `json:"methods"`
	Warnings  []string                   `json:"warnings,omitempty"`

	// Panic: fewer than router.panic_threshold of the pool are routable,
	// and requests go to every endpoint of it, least bad first.
	Panic       bool   `json:"panic"`
	PanicReason string `json:"panic_reason,omitempty"`
	// Slowdown: deadlines are being passed by most of the pool at once (or
	// rpcdash is the slow part), and not charged to any breaker.
	Slowdown *SlowdownInfo `json:"slowdown,omitempty"`
}

// EndpointSnapshot is one endpoint's state.
type EndpointSnapshot struct {
	Name         string                    `json:"name"`
	URL          string                    `json:"url"` // redacted
	Provider     string                    `json:"provider,omitempty"`
	Region       string                    `json:"region,omitempty"`
	Domain       string                    `json:"domain,omitempty"`
	Routable     bool                      `json:"routable"`
	Drained      bool                      `json:"drained"`
	Breaker      BreakerSnapshot           `json:"breaker"`
	BackoffUntil *time.Time                `json:"backoff_until,omitempty"`
	Fault        *FaultInfo                `json:"fault,omitempty"`
	InFlight     int64                     `json:"in_flight"`
	Latency      LatencyStats              `json:"latency"`
	Rates        RateStats                 `json:"rates"`
	Head         int64                     `json:"head"`
	Lag          int64                     `json:"lag"`
	LagExcluded  bool                      `json:"lag_excluded"`
	Exclusions   []string                  `json:"exclusions,omitempty"`
	LastError    string                    `json:"last_error,omitempty"`
	LastErrorAt  *time.Time                `json:"last_error_at,omitempty"`
	Accounting   AccountSnapshot           `json:"accounting"`
	Methods      map[string]MethodSnapshot `json:"methods,omitempty"`
	Independence *IndependenceInfo         `json:"independence,omitempty"`
}

// BreakerSnapshot is a breaker's state for display.
type BreakerSnapshot struct {
	State               string     `json:"state"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	TrialSuccesses      int        `json:"trial_successes"`
	Cooldown            string     `json:"cooldown"`
	OpenedAt            *time.Time `json:"opened_at,omitempty"`
	NextTrialAt         *time.Time `json:"next_trial_at,omitempty"`
	Reopens             int        `json:"reopens"`
}

// LatencyStats are rolling-window latencies in milliseconds.
type LatencyStats struct {
	Count    int64   `json:"count"`
	Censored int64   `json:"censored,omitempty"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P95      float64 `json:"p95_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p999_ms"`
	Max      float64 `json:"max_ms"`
	Mean     float64 `json:"mean_ms"`
}

// RateStats are rolling-window counts and the failure share.
type RateStats struct {
	Attempts    int64   `json:"attempts"`
	Successes   int64   `json:"successes"`
	Failures    int64   `json:"failures"`
	Timeouts    int64   `json:"timeouts"`
	RateLimited int64   `json:"rate_limited"`
	Cancelled   int64   `json:"cancelled"`
	ErrorRate   float64 `json:"error_rate"`
}

// MethodSnapshot is one (endpoint, method) pair.
type MethodSnapshot struct {
	Latency LatencyStats `json:"latency"`
	Rates   RateStats    `json:"rates"`
	// AttemptTimeoutMS is the deadline an attempt of this method gets now:
	// past it the endpoint is charged with a hang and a read races the next
	// endpoint beside the running attempt, which is not cut.
	AttemptTimeoutMS float64 `json:"attempt_timeout_ms"`
	// AttemptTimeoutSource: "learned" (factor × quantile of the answers,
	// slow and censored ones included), "floor", "ceiling" or "cold".
	AttemptTimeoutSource string `json:"attempt_timeout_source"`
	// Since start: attempts that passed the deadline without an answer, and
	// those of them that answered afterwards (slow, not lost).
	Overdue     int64 `json:"overdue"`
	LateAnswers int64 `json:"late_answers"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func latencyStats(w *LatencyWindow) LatencyStats {
	s := w.Summary()
	return LatencyStats{Count: s.Count, Censored: s.Censored, P50: ms(s.P50), P90: ms(s.P90), P95: ms(s.P95),
		P99: ms(s.P99), P999: ms(s.P999), Max: ms(s.Max), Mean: ms(s.Mean)}
}

func rateStats(r *RateWindow) RateStats {
	t := r.Totals()
	s := RateStats{Attempts: t.Attempts, Successes: t.Success, Failures: t.Failure, Timeouts: t.Timeout,
		RateLimited: t.RateLimited, Cancelled: t.Cancelled}
	if t.Attempts > 0 {
		s.ErrorRate = float64(t.Failure) / float64(t.Attempts)
	}
	return s
}

// Snapshot returns a deep copy of the engine's state.
func (e *Engine) Snapshot() Snapshot {
	now := e.now()
	s := Snapshot{
		Time: now, Chain: e.cfg.Chain.Kind, InFlight: e.inflight.Load(),
		MaxHead: e.heads.max.Load(), MaxLag: e.cfg.Chain.MaxHeadLag,
		Hedge:   e.hedge.status(),
		Totals:  e.acct.totals(),
		Methods: map[string]AccountSnapshot{},
	}
	for _, ep := range e.endpoints {
		es := e.endpointSnapshot(ep, now)
		if es.Routable {
			s.Routable++
		}
		s.Endpoints = append(s.Endpoints, es)
	}
	for _, m := range e.acct.names() {
		a := e.acct.method(m).snapshot()
		if e.methods.Class(m) == ClassRead && e.methods.Hedgeable(m) {
			d := e.hedge.delayFor(m)
			a.HedgeDelay, a.HedgeDelaySrc, a.HedgeDelayMS = d.Delay.String(), d.Source, ms(d.Delay)
			enabled := d.Enabled
			a.HedgeEnabled = &enabled
			a.OutstandingNow, a.OutstandingMax = e.hedge.outstanding(m)
		}
		s.Methods[m] = a
	}
	e.updatePanic(now)
	s.Panic, s.PanicReason = e.panicInfo()
	s.Slowdown = e.slow.info()
	s.Warnings = e.poolWarnings()
	return s
}

func (e *Engine) endpointSnapshot(ep *Endpoint, now time.Time) EndpointSnapshot {
	bi := ep.breaker.Info()
	es := EndpointSnapshot{
		Name: ep.Name, URL: ep.display, Provider: ep.Provider, Region: ep.Region, Domain: ep.Domain(),
		Drained:  ep.drained.Load(),
		InFlight: ep.inflight.Load(),
		Latency:  latencyStats(ep.latency),
		Rates:    rateStats(ep.rates),
		Head:     ep.head.Load(), Lag: e.lagOf(ep), LagExcluded: ep.lagExcluded.Load(),
		Accounting: ep.acct.snapshot(),
		Breaker: BreakerSnapshot{State: bi.State.String(), ConsecutiveFailures: bi.ConsecutiveFailures,
			TrialSuccesses: bi.ConsecutiveSuccesses, Cooldown: bi.CurrentCooldown.String(), Reopens: bi.ReopenCount},
	}
	if !bi.OpenedAt.IsZero() && bi.State != BreakerClosed {
		t := bi.OpenedAt
		es.Breaker.OpenedAt = &t
	}
	if !bi.NextTrialAt.IsZero() && bi.State == BreakerOpen {
		t := bi.NextTrialAt
		es.Breaker.NextTrialAt = &t
	}
	if off, until := ep.backedOff(now); off {
		es.BackoffUntil = &until
	}
	if f := e.faultOf(ep); f != nil {
		es.Fault = f.info()
	}
	ep.mu.Lock()
	if ep.lastErr != "" {
		es.LastError = ep.lastErr
		t := ep.lastAt
		es.LastErrorAt = &t
	}
	methods := make(map[string]*methodStats, len(ep.methods))
	for m, st := range ep.methods {
		methods[m] = st
	}
	ep.mu.Unlock()
	if len(methods) > 0 {
		es.Methods = make(map[string]MethodSnapshot, len(methods))
		for m, st := range methods {
			d, src := e.attemptDeadline(ep, st)
			es.Methods[m] = MethodSnapshot{Latency: latencyStats(st.latency), Rates: rateStats(st.rates),
				AttemptTimeoutMS: ms(d), AttemptTimeoutSource: src,
				Overdue: st.overdue.Load(), LateAnswers: st.lateAnswers.Load()}
		}
	}
	es.Independence = ep.independence.Load()
	es.Exclusions = ep.exclusionList()
	es.Routable = e.routable(ep, now)
	return es
}

func blockedNow(ep *Endpoint, now time.Time) bool {
	b, _ := ep.blocked(now, false)
	return b
}

// routable says whether ep can take new traffic now (for tip-dependent reads
// too): what /healthz, the Snapshot and the metrics report.
func (e *Engine) routable(ep *Endpoint, now time.Time) bool {
	if ep.drained.Load() || ep.lagExcluded.Load() || blockedNow(ep, now) {
		return false
	}
	ok, trial := ep.breaker.Routable()
	return ok && !(trial && e.probeTrials.Load())
}
