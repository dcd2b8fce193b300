package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// Snapshot is an immutable deep copy of the engine's state: the console's
// contract, and what GET /v1/status shows (status_json.go shapes it for the
// wire). Nothing in it aliases engine memory. Durations are time.Duration,
// instants time.Time (zero = none); everything the screen shows is computed
// here, from the engine's own windows, so a view is a function of one
// Snapshot.
type Snapshot struct {
	Time      time.Time // when it was taken
	Started   time.Time // when the engine started (uptime = Time − Started)
	Chain     string
	InFlight  int64   // client requests being served
	Routable  int     // endpoints that can take new traffic now
	MaxHead   int64   // the pool head: the highest credible head of the endpoints that count (0 = unknown)
	HeadPace  float64 // blocks (slots) per second the pool head advances at, 0 until measured
	MaxLag    int64   // chain.max_head_lag
	Endpoints []EndpointSnapshot
	Hedge     HedgeStatus
	Totals    AccountSnapshot         // counters since start, all methods
	Methods   map[string]MethodStatus // per method (the accounting label: past the cap, "other")
	Client    ClientStats             // what clients saw over the last minute, whole pool
	Warnings  []Warning               // independence findings
	Demo      DemoStatus              // the built-in demo load, when on
	Settings  Settings                // thresholds an observer outside the process needs

	// Panic: fewer than router.panic_threshold of the pool are routable,
	// and requests go to every endpoint of it, least bad first.
	Panic       bool
	PanicReason string
	// PanicWorst is the reason at the fewest routable of the panic in
	// progress or, once over, the last one; empty if none has been.
	PanicWorst string
	// LastResort counts the endpoints panic routing may still send a read
	// to (not drained, not a shadow, not on the wrong chain, not refusing
	// connections): with Routable 0, none means no request can be sent.
	LastResort int
	// StandbyActive: standby endpoints take client traffic now (the
	// primaries cannot take it, see standby.go); StandbyReason says why.
	StandbyActive bool
	StandbyReason string
	// Slowdown: deadlines are being passed by most of the pool at once (or
	// rpcdash is the slow part), and not charged to any breaker; nil when
	// none.
	Slowdown *SlowdownInfo
	// MirrorsInFlight: shadow mirrors running now (at most 64 pool-wide).
	MirrorsInFlight int64
	// WriteAffinity: the endpoint the latest write went to, which writes
	// and reads of the pending state go to first until its window ends
	// (router.write_affinity); nil when no write is in its window.
	WriteAffinity *WriteAffinity
}

// Settings are the configured thresholds that an observer outside the
// process (the drill, a script) needs to judge what it sees.
type Settings struct {
	BreakerFailures  int
	BreakerSuccesses int
	BreakerCooldown  time.Duration
	RouterTolerance  float64
	RequestTimeout   time.Duration
	// ProbeTrials: half-open trials are probes, sent every ProbeInterval.
	ProbeTrials   bool
	ProbeInterval time.Duration
	// ProbeRecover is how many probes in a row within chain.max_head_lag
	// readmit a lagging endpoint (probes.recover).
	ProbeRecover int
	// PromoteMatchRate is router.promote_match_rate; PromoteMinSamples how
	// many comparisons (or attempts) a promotion is judged on at least
	// (promote.go).
	PromoteMatchRate  float64
	PromoteMinSamples int64
	// StatsWindow is server.stats_window: how far back an endpoint's
	// latency percentiles and rates reach.
	StatsWindow time.Duration
}

func (e *Engine) settings() Settings {
	c := e.cfg
	return Settings{BreakerFailures: c.Breaker.Failures, BreakerSuccesses: c.Breaker.Successes,
		BreakerCooldown: c.Breaker.Cooldown, RouterTolerance: c.Router.Tolerance,
		RequestTimeout: c.Server.RequestTimeout,
		ProbeTrials:    e.probeTrials.Load(), ProbeInterval: c.Probes.Interval, ProbeRecover: c.Probes.Recover,
		PromoteMatchRate: c.Router.PromoteMatchRate, PromoteMinSamples: minJudged,
		StatsWindow: c.Server.StatsWindow}
}

// EndpointSnapshot is one endpoint's state.
type EndpointSnapshot struct {
	Name     string
	URL      string // redacted
	Proxy    string // how it is reached: "" directly, "env", or the proxy's redacted URL
	Provider string
	Region   string
	Domain   string          // failure domain ("" = unknown)
	Role     string          // RolePrimary, RoleStandby, RoleShadow or RoleCanary ([[endpoints]] role, SetRole)
	Share    float64         // a canary's share of reads' first attempts, a shadow's of reads mirrored; 0 otherwise
	Shadow   *ShadowSnapshot // comparison figures: a shadow's, or one's that has been mirrored to
	Routable bool
	Drained  bool
	// Refusing: its last connection was refused (the provider is down).
	// With its breaker not letting traffic through, panic routing does not
	// send to it either: no request can reach it.
	Refusing     bool
	Breaker      BreakerSnapshot
	BackoffUntil time.Time // a 429 back-off of the whole endpoint running until then; zero = none
	Fault        *FaultInfo
	InFlight     int64
	// BatchPace is the Kaplan–Meier median round trip of its upstream batches
	// over the stats window (0 before any), of BatchRoundTrips (outrun ones
	// censored): what orders an upstream batch's endpoints (batchpace.go).
	BatchPace       time.Duration
	BatchRoundTrips int64
	Latency         LatencyStats // successful attempts over the stats window, answers held out of the deadlines' windows included
	Rates           RateStats
	Head            int64
	HeadSeenAt      time.Time // when its head was last seen (zero: never); see LagUnknown
	Lag             int64
	LagExcluded     bool
	// LagInSync counts, while LagExcluded, the probes in a row that found
	// the endpoint within chain.max_head_lag: it is readmitted at
	// Settings.ProbeRecover (hysteresis), so "lag 0, still excluded" is
	// an endpoint catching up, not a contradiction.
	LagInSync int64
	// LagRecoverNeed is how many such probes its readmission needs now:
	// Settings.ProbeRecover, doubled for each flap in a row (lagging again
	// soon after a readmission, rejoinflaps.go), at most a
	// breaker.max_cooldown's worth. LagFlaps counts those flaps.
	LagRecoverNeed int64
	LagFlaps       int64
	Exclusions     []string
	LastError      string
	LastErrorAt    time.Time
	Errors         []EndpointError // the last few, newest first, redacted
	Accounting     AccountSnapshot
	Methods        map[string]MethodSnapshot
	Independence   *IndependenceInfo
	Score          ScoreParts    // the routing score over all methods
	Series         []SeriesPoint // the last SeriesLength seconds, oldest first
}

// WhyLonger says why the breaker's cooldown is longer than
// breaker.cooldown, if it knows: "it flapped", "a trial failed" (or how
// many times), in that order; nil when neither.
func (b BreakerSnapshot) WhyLonger() []string {
	var why []string
	switch {
	case b.Flaps == 1:
		why = append(why, "it flapped")
	case b.Flaps > 1:
		why = append(why, fmt.Sprintf("it flapped %d times in a row", b.Flaps))
	}
	switch {
	case b.Reopens == 1:
		why = append(why, "a trial failed")
	case b.Reopens > 1:
		why = append(why, fmt.Sprintf("%d trials failed", b.Reopens))
	}
	return why
}

// BreakerState is where an endpoint's circuit breaker stands; it reads
// as its name ("closed", "open", "half-open") in JSON.
type BreakerState = breaker.State

const (
	BreakerClosed   BreakerState = breaker.Closed
	BreakerOpen     BreakerState = breaker.Open
	BreakerHalfOpen BreakerState = breaker.HalfOpen
)

// BreakerSnapshot is a breaker's state for display.
type BreakerSnapshot struct {
	State               BreakerState
	ConsecutiveFailures int
	TrialSuccesses      int
	Cooldown            time.Duration
	OpenedAt            time.Time // zero while closed
	NextTrialAt         time.Time // open: when the cooldown ends
	Reopens             int
	Flaps               int // opens in a row that each came soon after a close (breaker.FlapSpan)
	// HeldClosed: breaker.max_open_share kept it from opening within the
	// last breaker.cooldown. It failed as an open one would have, and stays
	// in the pool (ranked last) so that breakers never empty it.
	HeldClosed bool
}

// LatencyStats are rolling-window latencies. The percentiles count the
// attempts cut short when another won (Censored: known only to take
// longer than they ran) by the Kaplan–Meier estimate, as the hedge delay
// does: dropping them would drop exactly a hedged endpoint's tail. Open
// marks the percentiles censoring leaves lower bounds (see
// LatencyStats.LowerBound). Max and Mean are of the answers (Count).
type LatencyStats struct {
	Count    int64
	Censored int64
	P50      time.Duration
	P90      time.Duration
	P95      time.Duration
	P99      time.Duration
	P999     time.Duration
	Max      time.Duration
	Mean     time.Duration
	// Open[i] is true when percentile i (P50, P90, P95, P99, P999) is a
	// lower bound: the answers end, or censoring dominates them, before
	// it (the slow attempts were cut short, so the figure is "at least").
	Open [5]bool
}

// Percentile indexes of LatencyStats.Open.
const (
	PctP50 = iota
	PctP90
	PctP95
	PctP99
	PctP999
)

// LowerBound says whether percentile i (PctP50 … PctP999) is only a lower
// bound.
func (l LatencyStats) LowerBound(i int) bool { return i >= 0 && i < len(l.Open) && l.Open[i] }

// Percentile is percentile i (PctP50 … PctP999), 0 for any other i.
func (l LatencyStats) Percentile(i int) time.Duration {
	switch i {
	case PctP50:
		return l.P50
	case PctP90:
		return l.P90
	case PctP95:
		return l.P95
	case PctP99:
		return l.P99
	case PctP999:
		return l.P999
	}
	return 0
}

// RateStats are rolling-window counts and the failure share.
type RateStats struct {
	Attempts    int64
	Successes   int64
	Failures    int64
	Timeouts    int64
	RateLimited int64
	Cancelled   int64
	ErrorRate   float64 // Failures ÷ Verdicts()
}

// Verdicts is the attempts that ended in an outcome of the endpoint's own
// (answered, failed, 429, not served): all but those rpcdash let go of
// because another attempt won or the request ended, which say nothing of
// its errors. The shares (ERR%, 429%) are of these.
func (r RateStats) Verdicts() int64 { return r.Attempts - r.Cancelled }

// RateLimitedShare is the share of attempts that reached a verdict
// answered with HTTP 429.
func (r RateStats) RateLimitedShare() float64 {
	if r.Verdicts() <= 0 {
		return 0
	}
	return float64(r.RateLimited) / float64(r.Verdicts())
}

// MethodSnapshot is one (endpoint, method) pair.
type MethodSnapshot struct {
	Latency LatencyStats
	Rates   RateStats
	// AttemptTimeout is the deadline an attempt of this method gets now:
	// past it the endpoint is charged with a hang (a borrowed deadline's at
	// the cold one) and a read races the next endpoint beside the running
	// attempt, which is not cut.
	AttemptTimeout time.Duration
	// AttemptTimeoutSource: "learned" (factor × quantile of the answers,
	// slow and censored ones included), "few" (too few answers of its own:
	// its few and the other endpoints' answers to the method), "floor",
	// "ceiling", "cold", or "borrowed" (cold: a read races the next
	// endpoint at the pool's deadline for the method, and a hang is
	// charged only at the cold deadline, borrowed_deadline.go), or "half"
	// (a read races the next candidate at half the request's deadline, a
	// hang is charged only at the endpoint's own, race_ceiling.go).
	AttemptTimeoutSource string
	Score                ScoreParts // the endpoint's routing score for this method
	// Since start: attempts that passed the deadline without an answer, and
	// those of them that answered afterwards (slow, not lost).
	Overdue     int64
	LateAnswers int64
	// BackoffUntil: a 429 back-off of this method on this endpoint running
	// until then (the method goes elsewhere, the endpoint serves the
	// others); zero = none. The whole endpoint's is EndpointSnapshot's.
	BackoffUntil time.Time
	// CannotServeUntil: the endpoint answered lately that it cannot serve
	// this method (method not found, not supported …); until then the
	// router ranks it after the endpoints that can, for this method. Zero
	// = it serves it, as far as rpcdash knows.
	CannotServeUntil time.Time
	// HungUntil: an attempt of this method hung on the endpoint lately and
	// it has not answered the method since (it may answer others: its
	// probes); until then the router ranks it after the others for this
	// method. Zero = none.
	HungUntil time.Time
}

// Class is how a method may be routed: read (hedgeable, failed over),
// write (sent once, to one endpoint) or stateful (pinned to the endpoint
// holding the state); it reads as its name in JSON.
type Class = jsonrpc.Class

const (
	ClassRead     Class = jsonrpc.ClassRead
	ClassWrite    Class = jsonrpc.ClassWrite
	ClassStateful Class = jsonrpc.ClassStateful
)

// MethodStatus is one method across the pool.
type MethodStatus struct {
	AccountSnapshot
	Class     Class
	Hedgeable bool
	// Weight is the method's cost units in the hedge budget: each read
	// deposits hedge.budget × it, each hedge withdraws it (methods.weights,
	// else the built-in figure, else 1).
	Weight float64
	// RequestTimeout is the method's request deadline ([methods.timeouts],
	// the built-in one of long reads or of writes that wait for their
	// receipt, else server.request_timeout).
	RequestTimeout time.Duration
	Hedge          *MethodHedge // nil unless Hedgeable
	Client         ClientStats  // what clients saw over the last minute
}

// MethodHedge is a hedgeable method's hedging now.
type MethodHedge struct {
	Enabled         bool
	Delay           time.Duration
	DelaySource     string  // "auto", "cold", "config" or "live"
	Quantile        float64 // the auto delay's quantile (its own when set for the method alone)
	Outstanding     int64   // hedges in flight
	OutstandingPeak int64
}

// FaultInfo is an injected fault as the Snapshot shows it.
type FaultInfo struct {
	Mode       FaultMode
	Rate       float64
	Latency    time.Duration
	Duration   time.Duration // 0 = until cleared
	RetryAfter time.Duration
	Since      time.Time
	Expires    time.Time // zero = never
}

// DemoStatus says whether the built-in demo load runs, and how hard.
type DemoStatus struct {
	Enabled bool
	Rate    float64 // requests per second
}

// latencyStats summarises a window with the answers held out of it
// (lateanswers.go) counted in.
func latencyStats(w *window.Latency, held []time.Duration) LatencyStats {
	s := w.SummaryWith(held)
	return LatencyStats{Count: s.Count, Censored: s.Censored, P50: s.P50, P90: s.P90, P95: s.P95,
		P99: s.P99, P999: s.P999, Max: s.Max, Mean: s.Mean, Open: s.Open}
}

func rateStats(r *window.Rates) RateStats {
	t := r.Totals()
	s := RateStats{Attempts: t.Attempts, Successes: t.Success, Failures: t.Failure, Timeouts: t.Timeout,
		RateLimited: t.RateLimited, Cancelled: t.Cancelled}
	if v := s.Verdicts(); v > 0 {
		s.ErrorRate = float64(t.Failure) / float64(v)
	}
	return s
}

// Snapshot returns a deep copy of the engine's state. It only reads: an
// expired fault reads as none (its timer clears it), and no event is added.
func (e *Engine) Snapshot() Snapshot {
	now := e.now()
	s := Snapshot{
		Time: now, Started: e.started, Chain: e.cfg.Chain.Kind, InFlight: e.inflight.Load(),
		MaxHead: e.heads.top.Load(), HeadPace: e.heads.blocksPerSecond(), MaxLag: e.cfg.Chain.MaxHeadLag,
		Hedge:     e.hedge.status(),
		Methods:   map[string]MethodStatus{},
		Client:    e.recent.pool.stats(),
		Warnings:  e.poolWarnings(),
		Demo:      e.demoStatus(),
		Endpoints: make([]EndpointSnapshot, 0, len(e.endpoints)),
	}
	routable := make([]bool, len(e.endpoints))
	for i, ep := range e.endpoints {
		routable[i] = e.routable(ep, now)
	}
	overall := e.scores("", routable)
	for i, ep := range e.endpoints {
		es := e.endpointSnapshot(ep, now, routable[i])
		es.Score = overall[i]
		if es.Routable {
			s.Routable++
		}
		s.Endpoints = append(s.Endpoints, es)
	}
	e.methodScores(s.Endpoints, routable)
	var accounts map[string]AccountSnapshot
	accounts, s.Totals = e.acct.byMethod()
	for m, a := range accounts {
		s.Methods[m] = e.methodStatus(m, a)
	}
	s.Settings = e.settings()
	s.Panic, s.PanicReason, s.PanicWorst = e.panicInfo()
	s.LastResort = e.lastResort()
	s.StandbyActive, s.StandbyReason = e.standbyInfo()
	s.Slowdown = e.slow.info()
	s.MirrorsInFlight = e.mirrors.Load()
	s.WriteAffinity = e.writeAffinityInfo(now)
	return s
}

// methodStatus is method m's status, a its accounting.
func (e *Engine) methodStatus(m string, a AccountSnapshot) MethodStatus {
	ms := MethodStatus{AccountSnapshot: a, Class: e.methods.Class(m), Weight: e.methods.Weight(m),
		RequestTimeout: e.requestTimeout(m), Client: e.recent.methodStats(m)}
	if ms.Class == jsonrpc.ClassRead && e.methods.Hedgeable(m) {
		d := e.hedge.delayFor(m)
		now, peak := e.hedge.outstanding(m)
		ms.Hedgeable = true
		ms.Hedge = &MethodHedge{Enabled: d.Enabled, Delay: d.Delay, DelaySource: d.Source, Quantile: d.Quantile, Outstanding: now, OutstandingPeak: peak}
	}
	return ms
}

// methodScores fills each endpoint's per-method score, the pool's best
// latency taken per method as the router takes it.
func (e *Engine) methodScores(eps []EndpointSnapshot, routable []bool) {
	seen := map[string]bool{}
	for _, es := range eps {
		for m := range es.Methods {
			if seen[m] {
				continue
			}
			seen[m] = true
			parts := e.scores(m, routable)
			for i := range eps {
				if ms, ok := eps[i].Methods[m]; ok {
					ms.Score = parts[i]
					eps[i].Methods[m] = ms
				}
			}
		}
	}
}

func (e *Engine) endpointSnapshot(ep *endpoint, now time.Time, routable bool) EndpointSnapshot {
	bi := ep.breaker.Info()
	rs := ep.roleState()
	es := EndpointSnapshot{
		Name: ep.Name, URL: ep.display, Proxy: ep.proxyDisplay, Provider: ep.Provider, Region: ep.Region, Domain: ep.Domain(),
		Role:     rs.role,
		Share:    rs.share,
		Routable: routable,
		Drained:  ep.drained.Load(),
		Refusing: ep.refusing.Load(),
		InFlight: ep.inflight.Load(),
		Latency:  latencyStats(ep.latency, ep.late.latencies(nil)),
		Rates:    rateStats(ep.rates),
		Head:     ep.reportedHead(), HeadSeenAt: unixTime(ep.headAt.Load()), Lag: e.lagOf(ep), LagExcluded: ep.lagExcluded.Load(), LagInSync: lagInSync(ep),
		LagRecoverNeed: ep.lagFlaps.needNow(e.cfg.Probes.Recover), LagFlaps: ep.lagFlaps.count(),
		Accounting: ep.acct.snapshot(),
		Breaker: BreakerSnapshot{State: bi.State, ConsecutiveFailures: bi.ConsecutiveFailures,
			TrialSuccesses: bi.ConsecutiveSuccesses, Cooldown: bi.CurrentCooldown, Reopens: bi.ReopenCount, Flaps: bi.Flaps,
			HeldClosed: bi.State == breaker.Closed && e.heldClosedByCap(ep, now)},
		Series: ep.series.points(now, make([]SeriesPoint, 0, SeriesLength)),
	}
	if exact, censored := ep.batchPace.Counts(); exact > 0 {
		es.BatchPace, es.BatchRoundTrips = ep.batchPace.QuantileCensored(0.5), exact+censored
	}
	if bi.State != breaker.Closed {
		es.Breaker.OpenedAt = bi.OpenedAt
	}
	if bi.State == breaker.Open {
		es.Breaker.NextTrialAt = bi.NextTrialAt
	}
	if off, until := ep.backedOff(now); off {
		es.BackoffUntil = until
	}
	if f := faultNow(ep, now); f != nil {
		es.Fault = f.info()
	}
	if sh := ep.shadow.snapshot(); rs.role == RoleShadow || sh.Mirrored > 0 || sh.Dropped > 0 {
		es.Shadow = sh
	}
	ep.mu.Lock()
	es.LastError, es.LastErrorAt = ep.lastErr, ep.lastAt
	es.Errors = ep.errors.list()
	ep.mu.Unlock()
	methods := ep.methods.all()
	if len(methods) > 0 {
		es.Methods = make(map[string]MethodSnapshot, len(methods))
		for m, st := range methods {
			d, judge, src := e.raceDeadline(ep, st)
			d, _, src = raceCeiling(d, judge, src, e.methodLimit(st), len(e.endpoints) > 1)
			es.Methods[m] = MethodSnapshot{Latency: latencyStats(st.latency, ep.late.latencies(st)), Rates: rateStats(st.rates),
				AttemptTimeout: d, AttemptTimeoutSource: src,
				Overdue: st.overdue.Load(), LateAnswers: st.lateAnswers.Load(),
				BackoffUntil:     ep.pairBackoff(st, now),
				CannotServeUntil: st.cannotServeUntil(now, e.cfg.Breaker.Cooldown), HungUntil: st.hang.until(now)}
		}
	}
	if in := ep.independence.Load(); in != nil {
		c := *in
		c.IPs, c.ASNs = slices.Clone(in.IPs), slices.Clone(in.ASNs)
		es.Independence = &c
	}
	es.Exclusions = ep.exclusionList()
	return es
}

func blockedNow(ep *endpoint, now time.Time) bool {
	b, _ := ep.blocked(now, false)
	return b
}

// routable says whether ep can take new traffic now (for tip-dependent reads
// too): what /healthz, the Snapshot and the metrics report.
func (e *Engine) routable(ep *endpoint, now time.Time) bool {
	if ep.drained.Load() || ep.isShadow() || ep.lagExcluded.Load() || blockedNow(ep, now) {
		return false
	}
	ok, trial := ep.breaker.Routable()
	return ok && !(trial && e.probeTrials.Load())
}

// Serving is how many endpoints may answer clients: every one but the
// shadows, the pool that Routable counts against.
func (s Snapshot) Serving() int {
	n := 0
	for _, ep := range s.Endpoints {
		if ep.Role != RoleShadow {
			n++
		}
	}
	return n
}

// Shadows is how many endpoints are shadows.
func (s Snapshot) Shadows() int { return len(s.Endpoints) - s.Serving() }

// Endpoint is the endpoint named name; false when the pool has none.
func (s Snapshot) Endpoint(name string) (EndpointSnapshot, bool) {
	for _, ep := range s.Endpoints {
		if ep.Name == name {
			return ep, true
		}
	}
	return EndpointSnapshot{}, false
}

// RejoinNeed is how many probes in sync a lag-excluded ep's readmission
// needs: its own count (more than probes.recover after a flap), or
// Settings.ProbeRecover from an engine that does not give it.
func (s Snapshot) RejoinNeed(ep EndpointSnapshot) int64 {
	if ep.LagRecoverNeed > 0 {
		return ep.LagRecoverNeed
	}
	return int64(s.Settings.ProbeRecover)
}

// CatchingUp says whether ep is lag-excluded though back within
// chain.max_head_lag, kept out until its probes in sync reach RejoinNeed.
func (s Snapshot) CatchingUp(ep EndpointSnapshot) bool {
	return ep.LagExcluded && ep.Lag <= s.MaxLag && s.RejoinNeed(ep) > 0
}

// RejoiningText: "caught up, rejoining after 2 of 6 probes in sync".
func (s Snapshot) RejoiningText(ep EndpointSnapshot) string {
	return fmt.Sprintf("caught up, rejoining after %d of %d probes in sync", ep.LagInSync, s.RejoinNeed(ep))
}

func lagInSync(ep *endpoint) int64 {
	if !ep.lagExcluded.Load() {
		return 0
	}
	return ep.lagGood.Load()
}
