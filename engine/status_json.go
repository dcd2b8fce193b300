package engine

import (
	"encoding/json"
	"math"
	"slices"
	"time"
)

// The wire shape of GET /v1/status (and of the endpoint a control call
// returns, and of PUT /v1/hedge's answer). The Snapshot is Go values; this
// file alone decides how they read as JSON: durations in milliseconds as
// numbers ("p99_ms") or as Go duration strings ("cooldown": "10s"). Every
// field is present whatever its value (0, "", [] or {} when there is
// nothing to count), except the few the README says are absent when there
// is none (omitempty): an instant that has not come, a state not in force,
// a method's hedging fields for a method never hedged. Existing names and
// units are a contract that scripts and tests read: add fields, never
// rename or retype one. The console's
// attach mode reads the same JSON back into a Snapshot (UnmarshalJSON), so
// every Snapshot field must have a place here; TestStatusJSON_RoundTrips
// fails when one is missing.

type statusWire struct {
	Time       time.Time             `json:"time"`
	Started    time.Time             `json:"started"`
	Chain      string                `json:"chain"`
	InFlight   int64                 `json:"in_flight"`
	Routable   int                   `json:"routable"`
	LastResort int                   `json:"last_resort"`
	MaxHead    int64                 `json:"max_head"`
	HeadPace   float64               `json:"head_pace"`
	MaxLag     int64                 `json:"max_head_lag"`
	Endpoints  []endpointWire        `json:"endpoints"`
	Hedge      hedgeWire             `json:"hedge"`
	Totals     requestAccountWire    `json:"totals"`
	Methods    map[string]methodWire `json:"methods"`
	Client     clientWire            `json:"client"`
	Warnings   []string              `json:"warnings"` // the texts, as before
	Details    []warningWire         `json:"warning_details"`
	Demo       demoWire              `json:"demo"`
	Settings   settingsWire          `json:"settings"`
	Panic      bool                  `json:"panic"`
	PanicWhy   string                `json:"panic_reason"`
	PanicWorst string                `json:"panic_worst,omitempty"`
	Standby    bool                  `json:"standby_active"`
	StandbyWhy string                `json:"standby_reason"`
	Slowdown   *slowdownWire         `json:"slowdown,omitempty"`
	Mirrors    int64                 `json:"mirrors_in_flight"`
	Affinity   *writeAffinityWire    `json:"write_affinity,omitempty"`
}

// writeAffinityWire: absent when no write is in its window.
type writeAffinityWire struct {
	Endpoint string    `json:"endpoint"`
	Until    time.Time `json:"until"`
	Hashes   int       `json:"hashes"`
}

// settingsWire: durations as Go duration strings ("10s") and, as every
// other duration of the status, as …_ms numbers.
type settingsWire struct {
	BreakerFailures   int     `json:"breaker_failures"`
	BreakerSuccesses  int     `json:"breaker_successes"`
	BreakerCooldown   string  `json:"breaker_cooldown"`
	BreakerCooldownMS float64 `json:"breaker_cooldown_ms"`
	RouterTolerance   float64 `json:"router_tolerance"`
	RequestTimeout    string  `json:"request_timeout"`
	RequestTimeoutMS  float64 `json:"request_timeout_ms"`
	ProbeTrials       bool    `json:"probe_trials"`
	ProbeInterval     string  `json:"probe_interval"`
	ProbeIntervalMS   float64 `json:"probe_interval_ms"`
	ProbeRecover      int     `json:"probe_recover"`
	PromoteMatchRate  float64 `json:"promote_match_rate"`
	PromoteMinSamples int64   `json:"promote_min_samples"`
	StatsWindow       string  `json:"stats_window"`
	StatsWindowMS     float64 `json:"stats_window_ms"`
}

func (s Settings) wire() settingsWire {
	return settingsWire{BreakerFailures: s.BreakerFailures, BreakerSuccesses: s.BreakerSuccesses,
		BreakerCooldown: s.BreakerCooldown.String(), BreakerCooldownMS: ms(s.BreakerCooldown), RouterTolerance: s.RouterTolerance,
		RequestTimeout: s.RequestTimeout.String(), RequestTimeoutMS: ms(s.RequestTimeout), ProbeTrials: s.ProbeTrials,
		ProbeInterval: s.ProbeInterval.String(), ProbeIntervalMS: ms(s.ProbeInterval), ProbeRecover: s.ProbeRecover,
		PromoteMatchRate: s.PromoteMatchRate, PromoteMinSamples: s.PromoteMinSamples,
		StatsWindow: s.StatsWindow.String(), StatsWindowMS: ms(s.StatsWindow)}
}

func (w settingsWire) settings() Settings {
	s := Settings{BreakerFailures: w.BreakerFailures, BreakerSuccesses: w.BreakerSuccesses,
		RouterTolerance: w.RouterTolerance, ProbeTrials: w.ProbeTrials, ProbeRecover: w.ProbeRecover,
		PromoteMatchRate: w.PromoteMatchRate, PromoteMinSamples: w.PromoteMinSamples}
	s.BreakerCooldown, _ = time.ParseDuration(w.BreakerCooldown)
	s.RequestTimeout, _ = time.ParseDuration(w.RequestTimeout)
	s.ProbeInterval, _ = time.ParseDuration(w.ProbeInterval)
	s.StatsWindow, _ = time.ParseDuration(w.StatsWindow) // "" from an older serve: unknown
	return s
}

type endpointWire struct {
	Name           string                  `json:"name"`
	URL            string                  `json:"url"`
	Proxy          string                  `json:"proxy,omitempty"`
	Provider       string                  `json:"provider"`
	Region         string                  `json:"region"`
	Domain         string                  `json:"domain"`
	Role           string                  `json:"role"`
	Share          float64                 `json:"share"`
	Shadow         *shadowWire             `json:"shadow,omitempty"`
	Routable       bool                    `json:"routable"`
	Drained        bool                    `json:"drained"`
	Refusing       bool                    `json:"refusing"`
	Breaker        breakerWire             `json:"breaker"`
	BackoffUntil   *time.Time              `json:"backoff_until,omitempty"`
	Fault          *faultWire              `json:"fault,omitempty"`
	InFlight       int64                   `json:"in_flight"`
	BatchPaceMS    float64                 `json:"batch_pace_ms"`
	BatchTrips     int64                   `json:"batch_round_trips"`
	Latency        latencyWire             `json:"latency"`
	Rates          rateWire                `json:"rates"`
	Head           int64                   `json:"head"`
	HeadSeenAt     *time.Time              `json:"head_seen_at,omitempty"`
	Lag            int64                   `json:"lag"`
	LagExcluded    bool                    `json:"lag_excluded"`
	LagInSync      int64                   `json:"lag_in_sync"`
	LagRecoverNeed int64                   `json:"lag_recover_need"`
	LagFlaps       int64                   `json:"lag_flaps"`
	Exclusions     []string                `json:"exclusions"`
	LastError      string                  `json:"last_error"`
	LastErrorAt    *time.Time              `json:"last_error_at,omitempty"`
	Errors         []errorWire             `json:"errors"`
	Accounting     accountWire             `json:"accounting"`
	Methods        map[string]epMethodWire `json:"methods"`
	Independence   *IndependenceInfo       `json:"independence,omitempty"`
	Score          scoreWire               `json:"score"`
	Series         []seriesWire            `json:"series"`
}

type breakerWire struct {
	State               string     `json:"state"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	TrialSuccesses      int        `json:"trial_successes"`
	Cooldown            string     `json:"cooldown"`
	CooldownMS          float64    `json:"cooldown_ms"`
	OpenedAt            *time.Time `json:"opened_at,omitempty"`
	NextTrialAt         *time.Time `json:"next_trial_at,omitempty"`
	Reopens             int        `json:"reopens"`
	Flaps               int        `json:"flaps"`
	HeldClosed          bool       `json:"held_closed"`
}

type latencyWire struct {
	Count    int64   `json:"count"`
	Censored int64   `json:"censored"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P95      float64 `json:"p95_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p999_ms"`
	Max      float64 `json:"max_ms"`
	Mean     float64 `json:"mean_ms"`
	// LowerBounds names the percentile fields censoring leaves lower
	// bounds ("p99_ms", "p999_ms"), as the forecast's rows do; absent
	// when none.
	LowerBounds []string `json:"lower_bounds,omitempty"`
}

// latencyFields are the wire names of LatencyStats' percentiles, in
// Open's order.
var latencyFields = [5]string{"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms"}

// lowerBoundNames are the wire names of the open percentiles (open and
// fields in the same order): a "lower_bounds" list, empty when none.
func lowerBoundNames(open []bool, fields []string) []string {
	names := []string{}
	for i, o := range open {
		if o {
			names = append(names, fields[i])
		}
	}
	return names
}

// openFromNames marks in open the percentiles a "lower_bounds" list names.
func openFromNames(names, fields []string, open []bool) {
	for _, name := range names {
		if i := slices.Index(fields, name); i >= 0 {
			open[i] = true
		}
	}
}

type rateWire struct {
	Attempts    int64   `json:"attempts"`
	Successes   int64   `json:"successes"`
	Failures    int64   `json:"failures"`
	Timeouts    int64   `json:"timeouts"`
	RateLimited int64   `json:"rate_limited"`
	Cancelled   int64   `json:"cancelled"`
	ErrorRate   float64 `json:"error_rate"`
}

type epMethodWire struct {
	Latency              latencyWire `json:"latency"`
	Rates                rateWire    `json:"rates"`
	AttemptTimeoutMS     float64     `json:"attempt_timeout_ms"`
	AttemptTimeoutSource string      `json:"attempt_timeout_source"`
	Overdue              int64       `json:"overdue"`
	LateAnswers          int64       `json:"late_answers"`
	BackoffUntil         *time.Time  `json:"backoff_until,omitempty"`
	CannotServeUntil     *time.Time  `json:"cannot_serve_until,omitempty"`
	HungUntil            *time.Time  `json:"hung_until,omitempty"`
	Score                scoreWire   `json:"score"`
}

type slowdownWire struct {
	Kind    string    `json:"kind"`
	Reason  string    `json:"reason"`
	Since   time.Time `json:"since"`
	WorstMS float64   `json:"worst_ms"`
	Excused int64     `json:"excused"`
	Last    time.Time `json:"last"`
}

// accountWire is the attempts' side of the accounting: an endpoint's, and
// part of a method's or the totals' (requestAccountWire).
type accountWire struct {
	Primary     int64 `json:"primary"`
	Hedge       int64 `json:"hedge"`
	Failover    int64 `json:"failover"`
	Failures    int64 `json:"failures"`
	HedgesFired int64 `json:"hedges_fired"`
	HedgesWon   int64 `json:"hedges_won"`
	Losers      int64 `json:"cancelled_losers"`
	// OutrunUnanswered: the losers the hang rule counts (see
	// AccountSnapshot); added after the others.
	OutrunUnanswered int64   `json:"outrun_unanswered"`
	LoserTime        string  `json:"loser_upstream_time"`
	LoserSeconds     float64 `json:"loser_upstream_seconds"`
	MeanRelease      string  `json:"mean_cancel_to_release"`
	ExtraCost        float64 `json:"extra_cost_units"`
	FireRate         float64 `json:"fire_rate"`
	WinRate          float64 `json:"win_rate"`
	Amplification    float64 `json:"amplification"`
}

// requestAccountWire is a method's or the totals' accounting: the
// client requests and the errors rpcdash answered them with, beside their
// attempts (an endpoint has attempts only).
type requestAccountWire struct {
	Requests int64 `json:"requests"`
	accountWire
	ClientErrors int64 `json:"client_errors"`
	ClientGone   int64 `json:"client_gone"`
	// HedgesRefused: requests whose due hedge was not sent, by reason;
	// absent when none was.
	HedgesRefused map[string]int64 `json:"hedges_refused,omitempty"`
}

type methodWire struct {
	requestAccountWire
	// The hedging fields are nil for a method never hedged (absent), and
	// present whatever their value for one that is: a delay of 0s is 0.
	HedgeDelay     *string    `json:"hedge_delay,omitempty"`
	HedgeDelaySrc  *string    `json:"hedge_delay_source,omitempty"`
	HedgeDelayMS   *float64   `json:"hedge_delay_ms,omitempty"`
	HedgeEnabled   *bool      `json:"hedge_enabled,omitempty"`
	HedgeQuantile  *float64   `json:"hedge_quantile,omitempty"`
	OutstandingNow *int64     `json:"outstanding_hedges,omitempty"`
	OutstandingMax *int64     `json:"outstanding_hedges_peak,omitempty"`
	Class          string     `json:"class"`
	Hedgeable      bool       `json:"hedgeable"`
	Weight         float64    `json:"weight"`
	RequestTimeout float64    `json:"request_timeout_ms"`
	Client         clientWire `json:"client"`
}

type clientWire struct {
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	Gone      int64   `json:"gone"`
	PerSecond float64 `json:"per_second"`
	P50       float64 `json:"p50_ms"`
	P95       float64 `json:"p95_ms"`
	P99       float64 `json:"p99_ms"`
	// The minute's hedging, not since start as accounting's.
	HedgesFired      int64   `json:"hedges_fired"`
	HedgesWon        int64   `json:"hedges_won"`
	UpstreamAttempts int64   `json:"upstream_attempts"`
	FireRate         float64 `json:"fire_rate"`
	WinRate          float64 `json:"win_rate"`
	Amplification    float64 `json:"amplification"`
}

type hedgeWire struct {
	Enabled      bool    `json:"enabled"`
	Delay        string  `json:"delay"` // "auto" or the fixed value
	DelaySource  string  `json:"delay_source"`
	Quantile     float64 `json:"quantile"`
	MaxExtra     int     `json:"max_extra"`
	SameDomain   bool    `json:"same_domain"`
	Budget       float64 `json:"budget"`
	BudgetBurst  float64 `json:"budget_burst"`
	BudgetTokens float64 `json:"budget_tokens"`
	BudgetCap    float64 `json:"budget_cap"`
	// In requests (HedgeStatus.BudgetRequestTokens).
	BudgetRequestTokens float64 `json:"budget_request_tokens"`
	BudgetRequestCap    float64 `json:"budget_request_cap"`
	Paused              bool    `json:"paused"`
	PauseReason         string  `json:"pause_reason"`
	// BatchDelayMS: upstream batches' learnt delay, 0 until
	// hedge.min_samples of their round trips are known.
	BatchDelayMS    float64 `json:"batch_delay_ms"`
	BatchRoundTrips int64   `json:"batch_round_trips"`
}

type faultWire struct {
	Mode       FaultMode  `json:"mode"`
	Rate       float64    `json:"rate"`
	Latency    Duration   `json:"latency"`
	Duration   Duration   `json:"duration"`
	RetryAfter Duration   `json:"retry_after"`
	Since      time.Time  `json:"since"`
	Expires    *time.Time `json:"expires,omitempty"`
}

type scoreWire struct {
	LatencyMS     float64 `json:"latency_ms"`
	LatencySource string  `json:"latency_source"`
	FailureRate   float64 `json:"failure_rate"`
	Attempts      int64   `json:"attempts"`
	MinAttempts   int64   `json:"min_attempts"`
	ErrorFactor   float64 `json:"error_factor"`
	TailShare     float64 `json:"tail_share"`
	TailFactor    float64 `json:"tail_factor"`
	InFlight      int64   `json:"in_flight"`
	Concurrency   int64   `json:"concurrency"`
	LoadFactor    float64 `json:"load_factor"`
	Lag           int64   `json:"lag"`
	LagCostMS     float64 `json:"lag_cost_ms"`
	CostMS        float64 `json:"cost_ms"`
}

type seriesWire struct {
	Start     time.Time `json:"start"`
	Requests  int64     `json:"requests"`
	Failures  int64     `json:"failures"`
	Answers   int64     `json:"answers"`
	MeanRTTMS float64   `json:"mean_rtt_ms"`
	MaxRTTMS  float64   `json:"max_rtt_ms"`
}

type warningWire struct {
	Endpoints []string `json:"endpoints"`
	Reason    string   `json:"reason"`
	Text      string   `json:"text"`
}

type errorWire struct {
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

type demoWire struct {
	Enabled bool    `json:"enabled"`
	Rate    float64 `json:"rate"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fromMS reads a millisecond figure back to the nanosecond it came from.
func fromMS(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func timeOf(p *time.Time) time.Time {
	if p == nil {
		return time.Time{}
	}
	return *p
}

// MarshalJSON writes the Snapshot in the /v1/status shape.
func (s Snapshot) MarshalJSON() ([]byte, error) { return json.Marshal(s.wire()) }

// UnmarshalJSON reads a /v1/status document (an attached console's view).
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	var w statusWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = w.snapshot()
	return nil
}

// MarshalJSON writes one endpoint as /v1/status shows it.
func (es EndpointSnapshot) MarshalJSON() ([]byte, error) { return json.Marshal(es.wire()) }

// UnmarshalJSON reads one endpoint of /v1/status.
func (es *EndpointSnapshot) UnmarshalJSON(b []byte) error {
	var w endpointWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*es = w.snapshot()
	return nil
}

// MarshalJSON writes hedging's state as /v1/status shows it.
func (h HedgeStatus) MarshalJSON() ([]byte, error) { return json.Marshal(h.wire()) }

// UnmarshalJSON reads the "hedge" object of /v1/status.
func (h *HedgeStatus) UnmarshalJSON(b []byte) error {
	var w hedgeWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*h = w.status()
	return nil
}

func (s Snapshot) wire() statusWire {
	w := statusWire{Time: s.Time, Started: s.Started, Chain: s.Chain, InFlight: s.InFlight, Routable: s.Routable, LastResort: s.LastResort,
		MaxHead: s.MaxHead, HeadPace: s.HeadPace, MaxLag: s.MaxLag, Endpoints: make([]endpointWire, 0, len(s.Endpoints)),
		Hedge: s.Hedge.wire(), Totals: requestAccountOut(s.Totals), Methods: make(map[string]methodWire, len(s.Methods)),
		Client: clientOut(s.Client), Demo: demoWire{Enabled: s.Demo.Enabled, Rate: s.Demo.Rate}, Settings: s.Settings.wire(),
		Panic: s.Panic, PanicWhy: s.PanicReason, PanicWorst: s.PanicWorst, Standby: s.StandbyActive, StandbyWhy: s.StandbyReason,
		Mirrors: s.MirrorsInFlight, Warnings: []string{}, Details: []warningWire{}}
	if d := s.Slowdown; d != nil {
		w.Slowdown = &slowdownWire{Kind: d.Kind, Reason: d.Reason, Since: d.Since, WorstMS: ms(d.Worst), Excused: d.Excused, Last: d.Last}
	}
	if a := s.WriteAffinity; a != nil {
		w.Affinity = &writeAffinityWire{Endpoint: a.Endpoint, Until: a.Until, Hashes: a.Hashes}
	}
	for _, ep := range s.Endpoints {
		w.Endpoints = append(w.Endpoints, ep.wire())
	}
	for m, ms := range s.Methods {
		w.Methods[m] = methodOut(ms)
	}
	for _, x := range s.Warnings {
		w.Warnings = append(w.Warnings, x.Text)
		eps := x.Endpoints
		if eps == nil {
			eps = []string{}
		}
		w.Details = append(w.Details, warningWire{Endpoints: eps, Reason: x.Reason, Text: x.Text})
	}
	return w
}

func (w statusWire) snapshot() Snapshot {
	s := Snapshot{Time: w.Time, Started: w.Started, Chain: w.Chain, InFlight: w.InFlight, Routable: w.Routable, LastResort: w.LastResort,
		MaxHead: w.MaxHead, HeadPace: w.HeadPace, MaxLag: w.MaxLag, Hedge: w.Hedge.status(), Totals: requestAccountIn(w.Totals),
		Methods: make(map[string]MethodStatus, len(w.Methods)), Client: clientIn(w.Client),
		Demo: DemoStatus{Enabled: w.Demo.Enabled, Rate: w.Demo.Rate}, Settings: w.Settings.settings(),
		Panic: w.Panic, PanicReason: w.PanicWhy, PanicWorst: w.PanicWorst, StandbyActive: w.Standby, StandbyReason: w.StandbyWhy,
		MirrorsInFlight: w.Mirrors}
	if d := w.Slowdown; d != nil {
		s.Slowdown = &SlowdownInfo{Kind: d.Kind, Reason: d.Reason, Since: d.Since, Worst: fromMS(d.WorstMS), Excused: d.Excused, Last: d.Last}
	}
	if a := w.Affinity; a != nil {
		s.WriteAffinity = &WriteAffinity{Endpoint: a.Endpoint, Until: a.Until, Hashes: a.Hashes}
	}
	if w.Endpoints != nil {
		s.Endpoints = make([]EndpointSnapshot, 0, len(w.Endpoints))
	}
	for _, ep := range w.Endpoints {
		s.Endpoints = append(s.Endpoints, ep.snapshot())
	}
	for m, mw := range w.Methods {
		s.Methods[m] = methodIn(mw)
	}
	switch {
	case len(w.Details) > 0:
		for _, d := range w.Details {
			x := Warning{Endpoints: d.Endpoints, Reason: d.Reason, Text: d.Text}
			if len(x.Endpoints) == 0 {
				x.Endpoints = nil
			}
			s.Warnings = append(s.Warnings, x)
		}
	default: // an older engine: texts only
		for _, t := range w.Warnings {
			s.Warnings = append(s.Warnings, Warning{Text: t})
		}
	}
	return s
}
