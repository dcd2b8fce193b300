package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// hedger decides when and whether a read gets a duplicate. It knows nothing
// of endpoints: the executor asks it for a delay and for permission, and
// reports fires, wins and primary latencies through its methods.
//
// The delay of a method in auto mode is the configured quantile of its
// primaries' latency. A primary cancelled because its hedge won is a
// right-censored observation (its latency is only known to exceed the time
// it ran), and the window's product-limit estimate uses it as such: keeping
// only the winners would pull the quantile down, fire hedges earlier, and
// feed on itself.
type hedger struct {
	cfg    HedgeConfig
	now    func() time.Time
	events func(Event)
	// maxDelayScale is a method's request deadline over the general one
	// (nil: 1 for every method).
	maxDelayScale func(method string) float64
	// queueing says why hedges would only join the endpoints' queues, ""
	// when they would not (nil: never); with resume, at the lower threshold
	// hedging resumes below (queueing.go).
	queueing func(resume bool) string

	mu        sync.RWMutex
	enabled   bool
	delay     time.Duration // AutoDelay = auto
	delaySrc  string        // "config" or "live"
	quantile  float64       // the auto delay's quantile, live-tunable
	overrides map[string]hedgeOverride
	// fromConfig are the per-method overrides of the config, which an
	// all-methods update returns to.
	fromConfig map[string]hedgeOverride
	methods    *perMethod[*hedgeMethod] // none past maxTrackedMethods
	// batches are the round trips of primary upstream batches
	// (batchDelay's source).
	batches *window.Latency

	budget *hedgeBudget
	lag    hedgeLag // how late hedges go out (hedgelag.go)

	paused     atomic.Bool
	pauseKind  atomic.Uint32 // refusedPaused or refusedQueue: which guard paused it
	pauseMu    sync.Mutex
	pauseWhy   string
	errorShare *window.Rates // pool-wide, short: the saturation guard's view
}

// hedgeMethod is what the hedger tracks per method.
type hedgeMethod struct {
	primaries   *window.Latency // primary latencies, the auto delay's source
	untimed     *window.Rates   // primaries counted, not timed (Attempts): rpcdash's own stall timed them
	outstanding atomic.Int64    // hedges in flight
	peak        atomic.Int64    // highest outstanding count seen
}

type hedgeOverride struct {
	enabled  *bool
	delay    *time.Duration // nil = inherit; AutoDelay = auto
	quantile float64
	source   string
	name     string // the method as its setter spelt it (keys are folded), for messages
}

// guardSpan is how far back the saturation guard looks at 429s and timeouts.
const guardSpan = 10 * time.Second

func newHedger(cfg HedgeConfig, span time.Duration, now func() time.Time, events func(Event)) *hedger {
	h := &hedger{
		cfg: cfg, now: now, events: events,
		enabled:   cfg.Enabled,
		delaySrc:  "config",
		quantile:  cfg.Quantile,
		overrides: map[string]hedgeOverride{},
		methods: newPerMethod(false, func(string) *hedgeMethod {
			return &hedgeMethod{primaries: window.NewLatency(span, window.DefaultBuckets, now),
				untimed: window.NewRates(span, window.DefaultBuckets, now)}
		}),
		errorShare: window.NewRates(guardSpan, 10, now),
		batches:    window.NewLatency(span, window.DefaultBuckets, now),
	}
	h.delay, _ = ParseDelay(cfg.Delay)
	for m, mc := range cfg.Methods {
		o := hedgeOverride{enabled: mc.Enabled, quantile: mc.Quantile, source: "config", name: m}
		if mc.Delay != "" {
			d, _ := ParseDelay(mc.Delay)
			o.delay = &d
		}
		h.overrides[jsonrpc.Lower(m)] = o
	}
	h.fromConfig = maps.Clone(h.overrides)
	h.budget = newHedgeBudget(cfg.Budget, cfg.BudgetBurst, now)
	return h
}

// delayInfo is a method's current delay and where it came from:
// "auto" (the quantile estimate), "cold" (auto without enough samples yet),
// "config" or "live" (a fixed delay set in config or through the API).
type delayInfo struct {
	Delay    time.Duration
	Source   string
	Enabled  bool
	Quantile float64 // the method's auto quantile (in force when Source is auto or cold)
}

func (h *hedger) delayFor(method string) delayInfo {
	h.mu.RLock()
	enabled, delay, src, q := h.enabled, h.delay, h.delaySrc, h.quantile
	if o, ok := jsonrpc.LookupFold(h.overrides, method); ok {
		if o.enabled != nil {
			enabled = *o.enabled
		}
		if o.delay != nil {
			delay, src = *o.delay, o.source
		}
		if o.quantile > 0 {
			q = o.quantile
		}
	}
	h.mu.RUnlock()
	if delay != AutoDelay {
		return delayInfo{Delay: delay, Source: src, Enabled: enabled, Quantile: q}
	}
	cold := h.cfg.ColdDelay
	if hm, _ := h.methods.lookup(method); hm != nil {
		if nE, nC := hm.primaries.Counts(); nE+nC >= int64(h.cfg.MinSamples) {
			d := min(max(hm.primaries.DelayQuantile(q), h.cfg.MinDelay), h.maxDelayFor(method))
			return delayInfo{Delay: d, Source: "auto", Enabled: enabled, Quantile: q}
		}
		// A method whose few answers already took longer than the cold
		// delay (a trace) is not hedged on every call while it is learnt.
		if few, n := hm.primaries.AnswerQuantile(q); n > 0 {
			cold = max(cold, min(few, h.maxDelayFor(method)))
		}
	}
	return delayInfo{Delay: cold, Source: "cold", Enabled: enabled, Quantile: q}
}

// enabledFor says whether method is hedged (hedge.enabled, or the
// method's own override), its delay aside.
func (h *hedger) enabledFor(method string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.settingLocked(method).enabled
}

// roomFor says whether a hedge of weight units for method would pass the
// hedger's checks now (not paused, under the outstanding cap, within the
// budget), taking nothing.
func (h *hedger) roomFor(method string, units float64) bool {
	if h.paused.Load() {
		return false
	}
	if hm, ok := h.methods.lookup(method); !ok || hm.outstanding.Load() >= int64(h.cfg.MaxOutstanding) {
		return false
	}
	return h.budget.holds(units, 1)
}

// maxDelayFor is hedge.max_delay for method: scaled by its own request
// deadline over server.request_timeout (maxDelayScale), so that a trace
// whose answers take 5 s is not hedged on every call at 2 s.
func (h *hedger) maxDelayFor(method string) time.Duration {
	if h.maxDelayScale == nil {
		return h.cfg.MaxDelay
	}
	return time.Duration(float64(h.cfg.MaxDelay) * h.maxDelayScale(method))
}

// method returns the method's state, creating it on first use; nil past
// maxTrackedMethods (such a method is neither estimated nor hedged).
func (h *hedger) method(method string) *hedgeMethod {
	hm, _ := h.methods.get(method)
	return hm
}

// observePrimary feeds the delay estimate: exact when the primary answered,
// censored when it was cancelled after running for d.
func (h *hedger) observePrimary(method string, d time.Duration, censored bool) {
	hm := h.method(method)
	switch {
	case hm == nil:
	case censored:
		hm.primaries.RecordCensored(d)
	default:
		hm.primaries.Record(d)
	}
}

// untimedPrimary counts a primary whose latency is not learnt: rpcdash
// lost most of its time to its own slowness (timedOwnStall). The
// distribution says how many, so that its samples and the requests agree.
func (h *hedger) untimedPrimary(method string) {
	if hm := h.method(method); hm != nil {
		hm.untimed.Count(window.Attempts)
	}
}

// observeAttempt feeds the saturation guard.
func (h *hedger) observeAttempt(out outcome) {
	switch out {
	case outTimeout:
		h.errorShare.Count(window.Attempts, window.Timeout)
	case outRateLimit:
		h.errorShare.Count(window.Attempts, window.RateLimited)
	default:
		h.errorShare.Count(window.Attempts)
	}
}

// observeOverdue feeds the saturation guard an attempt that passed its
// deadline: a timeout in all but name, though the attempt runs on.
func (h *hedger) observeOverdue() { h.errorShare.Count(window.Timeout) }

// tryFire asks to send one hedge of weight units for method: it checks the
// saturation guard, the outstanding cap and the budget, in that order, and
// takes a slot and tokens when it says yes. done must be called when the
// hedge attempt ends.
func (h *hedger) tryFire(method string, units float64, calls int, inflight int64) (ok bool, done func()) {
	why, done := h.tryFireWhy(method, units, calls, inflight)
	return why == hedgeSent, done
}

// tryFireWhy is tryFire saying which check refused the hedge (hedgeSent
// when none did), for the request's trace.
func (h *hedger) tryFireWhy(method string, units float64, calls int, inflight int64) (why hedgeRefusal, done func()) {
	if h.updatePause(inflight); h.paused.Load() {
		return hedgeRefusal(h.pauseKind.Load()), nil
	}
	hm := h.method(method)
	if hm == nil {
		return refusedUntracked, nil
	}
	n := hm.outstanding.Add(1)
	if n > int64(h.cfg.MaxOutstanding) {
		hm.outstanding.Add(-1)
		return refusedOutstanding, nil
	}
	if !h.budget.withdraw(units, calls) {
		hm.outstanding.Add(-1)
		return refusedBudget, nil
	}
	for p := hm.peak.Load(); n > p && !hm.peak.CompareAndSwap(p, n); p = hm.peak.Load() {
	}
	return hedgeSent, func() { hm.outstanding.Add(-1) }
}

// outstanding returns the hedges in flight for method now and the peak.
func (h *hedger) outstanding(method string) (now, peak int64) {
	hm, ok := h.methods.lookup(method)
	if !ok {
		return 0, 0
	}
	return hm.outstanding.Load(), hm.peak.Load()
}

// deposit credits the budget for primary requests: calls of weight units
// in all.
func (h *hedger) deposit(units float64, calls int) { h.budget.deposit(units, calls) }

// refund returns the tokens of a hedge that found no endpoint to go to.
func (h *hedger) refund(units float64, calls int) { h.budget.refund(units, calls) }

// updatePause applies the saturation guard with hysteresis: pause above
// max_inflight or pause_error_rate or while most endpoints queue (queueing),
// resume only below 80 % of the in-flight limit, half the error share and
// the queue guard's lower ratio.
func (h *hedger) updatePause(inflight int64) {
	limit := int64(h.cfg.MaxInflight)
	paused := h.paused.Load()
	if !paused && inflight <= limit && !h.errorShareAbove(h.cfg.PauseErrorRate) && h.queueWhy(false) == "" {
		return
	}
	h.pauseMu.Lock()
	defer h.pauseMu.Unlock()
	paused = h.paused.Load()
	switch {
	case !paused:
		why, kind := "", refusedPaused
		if inflight > limit {
			why = fmt.Sprintf("%d requests in flight exceed hedge.max_inflight %d", inflight, limit)
		} else if h.errorShareAbove(h.cfg.PauseErrorRate) {
			why = fmt.Sprintf("429/timeout share of the last %s exceeds hedge.pause_error_rate %.2f", guardSpan, h.cfg.PauseErrorRate)
		} else {
			why, kind = h.queueWhy(false), refusedQueue
		}
		if why == "" {
			return
		}
		h.pauseKind.Store(uint32(kind)) // before paused: a hedge that sees paused reads its kind
		h.paused.Store(true)
		h.pauseWhy = why
		h.events(Event{Type: EventHedge, From: "active", To: "paused", Message: "hedging paused: " + why})
	case inflight*10 < limit*8 && !h.errorShareAbove(h.cfg.PauseErrorRate/2) && h.queueWhy(true) == "":
		h.paused.Store(false)
		h.pauseWhy = ""
		h.events(Event{Type: EventHedge, From: "paused", To: "active", Message: "hedging resumed"})
	}
}

// recheckPause lets paused hedging resume once its cause is gone, though no
// hedge is due to ask (a pause is otherwise looked at only by tryFire).
func (h *hedger) recheckPause(inflight int64) {
	if h.paused.Load() {
		h.updatePause(inflight)
	}
}

func (h *hedger) queueWhy(resume bool) string {
	if h.queueing == nil {
		return ""
	}
	return h.queueing(resume)
}

func (h *hedger) errorShareAbove(limit float64) bool {
	t := h.errorShare.Totals()
	if t.Attempts < minRateAttempts {
		return false
	}
	return float64(t.Timeout+t.RateLimited) > limit*float64(t.Attempts)
}

// HedgeUpdate is a live change of hedging (PUT /v1/hedge).
type HedgeUpdate struct {
	Enabled *bool   `json:"enabled,omitempty"`
	Delay   *string `json:"delay,omitempty"` // "auto" or a duration; "0s" duplicates at once
	Method  string  `json:"method,omitempty"`
	// AllMethods applies the change to every method at once: the global
	// setting changes and live per-method overrides of what it sets are
	// cleared (per-method settings from the config stay).
	AllMethods bool `json:"all_methods,omitempty"`
	// Quantile is the auto delay's quantile (hedge.quantile), per method
	// when Method is set.
	Quantile *float64 `json:"quantile,omitempty"`
	// Budget is hedge.budget; it is pool-wide and takes no Method.
	Budget *float64 `json:"budget,omitempty"`
}

func (u HedgeUpdate) validate() (time.Duration, error) {
	var d time.Duration
	if u.Delay != nil {
		var err error
		if d, err = ParseDelay(*u.Delay); err != nil {
			return 0, fmt.Errorf("delay: %v", err)
		}
	}
	switch {
	case u.Enabled == nil && u.Delay == nil && u.Quantile == nil && u.Budget == nil:
		return 0, fmt.Errorf("nothing to change: give enabled, delay, quantile and/or budget")
	case u.Quantile != nil && !(*u.Quantile > 0 && *u.Quantile < 1):
		return 0, fmt.Errorf("quantile: must be in (0, 1), 0 and 1 excluded, got %v", *u.Quantile)
	case u.Budget != nil && !(*u.Budget >= 0 && *u.Budget <= 1):
		return 0, fmt.Errorf("budget: must be in [0, 1], got %v", *u.Budget)
	case u.Budget != nil && u.Method != "":
		return 0, fmt.Errorf("budget: the hedge budget is pool-wide; give it without method")
	}
	return d, nil
}

func (h *hedger) apply(u HedgeUpdate) (string, error) {
	d, err := u.validate()
	if err != nil {
		return "", err
	}
	if u.AllMethods && u.Method != "" {
		return "", fmt.Errorf("all_methods: give either method or all_methods, not both")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var parts []string
	if u.Method == "" {
		if u.Enabled != nil {
			h.enabled = *u.Enabled
			parts = append(parts, fmt.Sprintf("enabled=%v", *u.Enabled))
		}
		if u.Delay != nil {
			// Set back to the config's (as bench restores it), it is the
			// config's again: "live" read as a change left behind.
			h.delay, h.delaySrc = d, "live"
			if cd, _ := ParseDelay(h.cfg.Delay); d == cd {
				h.delaySrc = "config"
			}
			parts = append(parts, "delay="+*u.Delay)
		}
		if u.Quantile != nil {
			h.quantile = *u.Quantile
			parts = append(parts, fmt.Sprintf("quantile=%v", *u.Quantile))
		}
		if u.Budget != nil {
			h.budget.setRatio(*u.Budget)
			parts = append(parts, fmt.Sprintf("budget=%v", *u.Budget))
		}
		if !u.AllMethods {
			return "hedging " + strings.Join(parts, " "), nil
		}
		msg := "hedging for all methods " + strings.Join(parts, " ")
		if cleared := h.clearLiveLocked(u.Enabled != nil, u.Delay != nil); len(cleared) > 0 {
			msg += " (live overrides cleared: " + strings.Join(cleared, ", ") + ")"
		}
		return msg, nil
	}
	key := jsonrpc.Lower(u.Method)
	o := h.overrides[key]
	if u.Enabled != nil {
		v := *u.Enabled
		o.enabled = &v
		parts = append(parts, fmt.Sprintf("enabled=%v", v))
	}
	if u.Delay != nil {
		o.delay = &d
		parts = append(parts, "delay="+*u.Delay)
	}
	if u.Quantile != nil {
		o.quantile = *u.Quantile
		parts = append(parts, fmt.Sprintf("quantile=%v", *u.Quantile))
	}
	o.source, o.name = "live", u.Method
	h.overrides[key] = o
	return "hedging for " + u.Method + " " + strings.Join(parts, " "), nil
}

// clearLiveLocked returns the per-method settings of enabled and/or delay
// to what the config says (what differs from the config was set live), and
// names the methods it changed.
func (h *hedger) clearLiveLocked(enabled, delay bool) []string {
	var cleared []string
	for key, o := range h.overrides {
		c, inConfig := h.fromConfig[key]
		changed := false
		if enabled && !samePtr(o.enabled, c.enabled) {
			o.enabled, changed = c.enabled, true
		}
		if delay && !samePtr(o.delay, c.delay) {
			o.delay, changed = c.delay, true
		}
		if !changed {
			continue
		}
		// source names the delay's origin: live while a live delay stays.
		o.source = "config"
		if !samePtr(o.delay, c.delay) {
			o.source = "live"
		}
		// A live quantile is not what this update sets: it keeps the entry.
		if !inConfig && o.enabled == nil && o.delay == nil && o.quantile == 0 {
			delete(h.overrides, key)
		} else {
			h.overrides[key] = o
		}
		cleared = append(cleared, o.name)
	}
	slices.Sort(cleared)
	return cleared
}

func samePtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// HedgeStatus is hedging's global state in the Snapshot.
type HedgeStatus struct {
	Enabled      bool
	Delay        time.Duration // AutoDelay = auto (per method, see MethodHedge)
	DelaySource  string        // "config" or "live"
	Quantile     float64
	MaxExtra     int
	SameDomain   bool // hedge.same_domain
	Budget       float64
	BudgetBurst  float64 // the bucket's cap, cost units
	BudgetTokens float64 // its balance now
	BudgetCap    float64 // what it may hold now: the burst plus the last budgetTTL's deposits
	// BudgetRequestTokens and BudgetRequestCap are the same in requests:
	// a hedge needs both (hedgeBudget).
	BudgetRequestTokens float64
	BudgetRequestCap    float64
	Paused              bool
	PauseReason         string
	// BatchDelay is the auto delay of upstream batches (batchDelay), 0
	// until hedge.min_samples of their round trips (BatchRoundTrips) are
	// known: until then a batch waits its methods' own delays.
	BatchDelay      time.Duration
	BatchRoundTrips int64
}

func (h *hedger) status() HedgeStatus {
	h.mu.RLock()
	s := HedgeStatus{Enabled: h.enabled, Delay: h.delay, DelaySource: h.delaySrc, Quantile: h.quantile,
		MaxExtra: h.cfg.MaxExtra, SameDomain: h.cfg.SameDomain, BudgetBurst: h.cfg.BudgetBurst}
	h.mu.RUnlock()
	s.Budget, s.BudgetTokens, s.BudgetCap = h.budget.state()
	s.BudgetRequestTokens, s.BudgetRequestCap = h.budget.requests()
	nE, nC := h.batches.Counts()
	s.BatchRoundTrips, s.BatchDelay = nE+nC, h.learntBatchDelay()
	s.Paused = h.paused.Load()
	h.pauseMu.Lock()
	s.PauseReason = h.pauseWhy
	h.pauseMu.Unlock()
	return s
}

// forget drops the primaries' round trips since t from every method's
// window and the batches' (slowdownafter.go).
func (h *hedger) forget(t time.Time) {
	for _, hm := range h.methods.all() {
		hm.primaries.Forget(t)
	}
	h.batches.Forget(t)
}

// hedgePaces is the primaries' auto-delay quantile of each method that had
// enough of them (and the batches'), as a pool slowdown began.
type hedgePaces struct {
	methods map[string]time.Duration
	batches time.Duration // 0: too few batches
}

func (h *hedger) paces() hedgePaces {
	p := hedgePaces{methods: map[string]time.Duration{}}
	for m, hm := range h.methods.all() {
		if nE, nC := hm.primaries.Counts(); nE+nC >= int64(h.cfg.MinSamples) {
			p.methods[m] = hm.primaries.DelayQuantile(h.quantileFor(m))
		}
	}
	if nE, nC := h.batches.Counts(); nE+nC >= int64(h.cfg.MinSamples) {
		p.batches = h.batchQuantile()
	}
	return p
}

// quantileFor is the auto delay's quantile in force for method: its own
// override's, else hedge.quantile. (delayFor says it too, with the delay
// it estimates from the primaries: an estimate the aftermath has no use
// for.)
func (h *hedger) quantileFor(method string) float64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if o, ok := jsonrpc.LookupFold(h.overrides, method); ok && o.quantile > 0 {
		return o.quantile
	}
	return h.quantile
}

// forgetMoved drops the round trips since t of each method whose quantile
// has moved from before (nearPace), and the batches' if theirs has; it
// names them, each with its quantile now beside before.
func (h *hedger) forgetMoved(t time.Time, before hedgePaces) (moved []string) {
	for m, hm := range h.methods.all() {
		was, ok := before.methods[m]
		if !ok {
			continue
		}
		if now := hm.primaries.DelayQuantile(h.quantileFor(m)); !nearPace(was, now) {
			hm.primaries.Forget(t)
			moved = append(moved, fmt.Sprintf("%s %s, %s before", m, now.Round(time.Millisecond), was.Round(time.Millisecond)))
		}
	}
	if before.batches > 0 {
		if now := h.batchQuantile(); !nearPace(before.batches, now) {
			h.batches.Forget(t)
			moved = append(moved, fmt.Sprintf("batches %s, %s before", now.Round(time.Millisecond), before.batches.Round(time.Millisecond)))
		}
	}
	slices.Sort(moved)
	return moved
}
