package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/engine/internal/redact"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// endpoint is one upstream and everything the engine knows about it.
// Explicit state (drain, fault, back-off, lag exclusion) changes only by an
// action or an observation; latencies and rates live in rolling windows.
type endpoint struct {
	Name     string
	Provider string
	Region   string
	index    int       // position in config, the tie-break of the router
	url      string    // may hold secrets: only the transport reads it
	display  string    // redacted URL
	proxy    proxyFunc // nil: reached directly
	// proxyDisplay is the proxy as shown: "", "env" or its redacted URL.
	proxyDisplay string

	breaker *breaker.Breaker
	latency *window.Latency // successful attempts, all methods
	// batchPace: its upstream batches' round trips, one per batch (a
	// cancelled one censored at its cancel), which orders the endpoints of
	// an upstream batch (batchpace.go).
	batchPace *window.Latency
	// queueLatency: the same answers over the last queueSpan only, for the
	// queue guard (queueing.go).
	queueLatency *window.Latency
	rates        *window.Rates
	// late: late answers held out of the windows while their run of
	// failures lasts (lateanswers.go); last: its last three answers.
	late lateHold
	last lastAnswers
	// answers: its latest answers' start and time taken (answerpace.go);
	// overdue: its latest attempts past their deadline (slowthrough.go).
	answers answerLog
	overdue overdueLog

	mu      sync.Mutex
	methods *perMethod[*methodStats]
	lastErr string
	lastAt  time.Time
	errors  errorRing
	backoff backoffState // of the whole endpoint
	// methodOffUntil is the latest end (unix nanos) of its pairs' back-offs:
	// past it, no method of it is backing off.
	methodOffUntil atomic.Int64
	// exclusions are reasons found by probes (wrong chain, unhealthy) that
	// keep the endpoint out of routing until they clear.
	exclusions map[string]string
	// healthyGood counts the healthy probes in a row while excluded as
	// unhealthy (Include); guarded by mu, as exclusions are.
	healthyGood int

	acct counts
	// openedAt: what its rates held when its breaker last opened from
	// closed; wasOpen: the stretches from such a mark to its close still
	// in the window. The score's failure rate leaves out what was counted
	// within them (openstretch.go).
	openedAt atomic.Pointer[window.Mark]
	wasOpen  atomic.Pointer[[]window.Stretch]
	inflight atomic.Int64 // attempts in flight: an upstream batch's calls each
	// exchanges are the HTTP requests in flight to it, an upstream batch one
	// however many calls it carries: the router's load (scoreParts). Counted
	// by calls, one batch of 50 in flight made a 40 ms endpoint cost 51
	// times its latency, and the next batch went to a 250 ms one.
	exchanges atomic.Int64
	// concurrency: how many exchanges at once it has answered at its
	// usual pace lately, the router's load factor's divisor (concurrency.go).
	concurrency provenConcurrency
	lastRead    atomic.Int64 // unix nanos of the last read attempt sent (router exploration)
	// probePace: the round trips of its last (up to three) answered head probes
	// (eth_blockNumber, getSlot): the same question put to every endpoint,
	// which says whether a client read exploring it may pay (worthARead).
	probePace lastAnswers
	// unanswered counts attempts in a row that lost to a hedge before any
	// answer, reset by any answer, whose unix nanos heardAt keeps (see
	// noteUnanswered).
	unanswered atomic.Int64
	heardAt    atomic.Int64
	// outrunByTies: every loss of the unanswered streak was by less than
	// its usual pace (noteUnanswered), which a healthy endpoint slower than
	// the winner also has: only deadlines passed unanswered judge it.
	outrunByTies atomic.Bool
	// suspect: its latest attempt (any method, a probe too) ended without
	// an answer — failed, or passed its deadline unanswered — whether or not
	// its breaker was charged (excused in a pool slowdown, held closed by
	// the open cap). Any answer clears it (heard). Exploration never puts a
	// suspect endpoint first (router explore).
	suspect atomic.Bool
	// silentAt (unix nanos, 0 = not silent): when it last looked hung — an
	// attempt passed its deadline unanswered, or hedges outran it without an
	// answer (noteUnanswered) — while its breaker could not take it out: the
	// hang was excused (a pool slowdown) or breaker.max_open_share refused
	// the open, or may soon: most of the pool looked slow while another
	// endpoint answered at its pace (poolSlow's "hung": two hung at once,
	// and the cap opens one breaker only). For a breaker.cooldown after,
	// unless it answers anything
	// (heard), the router ranks it after every endpoint that is not silent
	// (router.go), since its latency figure holds only the answers it gave
	// before; past the cooldown a read may reach it again, as a trial would.
	silentAt atomic.Int64
	// priorPace (nanoseconds, 0: none): its pace before a pool slowdown
	// whose answers it forgot (slowdownafter.go), its routing figure until
	// its window holds minRouteSamples answers again.
	priorPace atomic.Int64
	// paces: its usual pace over the last minute, the pace a pool
	// slowdown is judged against.
	paces paceHistory
	// probes: its probes in flight, given up when a trial is due
	// (probelisten.go).
	probes probeListeners
	// sampling: one of its overdue reads runs on after losing, to learn how
	// long its slow answers take (see stopRest).
	sampling atomic.Bool
	// refusing: its last connection was refused (hard evidence it is down),
	// until it answers anything again.
	refusing atomic.Bool
	// openRefusedAt is when breaker.max_open_share last kept its breaker
	// from opening (unix nanos): failing as if open, closed only by the cap.
	openRefusedAt atomic.Int64
	// busySince is when its in-flight count last rose from zero (unix
	// nanos): with heardAt, how long it has had work and said nothing.
	busySince atomic.Int64
	// overdueAt is when an attempt of it last passed its deadline;
	// hangAt when such a deadline was last charged to its breaker, and
	// hangOpenedAt when one of those charges opened it (see forgive).
	overdueAt atomic.Int64
	// faultFrom and faultTo: when its last injected fault that has ended
	// began and ended (unix nanos; see sentIntoEndedFault).
	faultFrom, faultTo atomic.Int64
	// lateAt is when it last answered past an attempt's deadline (unix
	// nanos): slow, not hung (retryfailed.go).
	lateAt atomic.Int64
	// noBatchUntil (unix nanos): an upstream batch to it failed as a whole
	// (batchforward.go); until then its calls go to it one by one.
	noBatchUntil atomic.Int64
	// smallBatchesUntil (unix nanos): it refused an upstream batch of over
	// batchFanout calls; until then it takes none that large.
	smallBatchesUntil atomic.Int64
	// batchSampling: an upstream batch to it that its hedge outran runs
	// on to its answer (batchrace.go); no batch goes to it meanwhile.
	batchSampling atomic.Bool
	hangAt        atomic.Int64
	hangSent      atomic.Int64 // when the first attempt charged a hang in its present silence was sent (noteHangSent)
	hangOpenedAt  atomic.Int64
	// silentRequests is how many of its attempts (client or probe, each a
	// request of its own) were charged a hang since it last said anything
	// (chargeHang; heard resets it): silence through two requests is no
	// one slow answer's tail (silenceOutlastsTail).
	silentRequests atomic.Int32
	drained        atomic.Bool
	// roles is its role and share ([[endpoints]] role, share), changed at
	// runtime by SetRole: each request reads it once where it routes.
	roles atomic.Pointer[roleState]
	// shadow holds its mirror comparisons (shadow.go), kept across roles.
	shadow *shadowStats
	fault  atomic.Pointer[activeFault]

	// head tracking (fed by probes and by passive answers)
	head    atomic.Int64
	headAt  atomic.Int64 // unix nanos of the last head observation
	topSeen atomic.Int64 // the pool head just after that observation (lagOf)
	// headLostAt: unix nanos of the first head probe answered without a
	// head since headAt (ObserveProbeNoHead); from then on the head is no
	// longer carried forward at the pace (lagOf).
	headLostAt atomic.Int64
	// genesisAt: unix nanos of its head of 0 (observeGenesis), 0 once it
	// reports another (judgeHead).
	genesisAt atomic.Int64
	headSince atomic.Int64 // unix nanos when head reached its current height
	// fellFrom is the head it went back from, while it stays below it (0:
	// it has not gone back): a rolled-back chain as its own client sees
	// it, which alone lets the served floor follow the pool head down.
	fellFrom atomic.Int64
	fellAt   atomic.Int64 // unix nanos when it went back from fellFrom
	ahead    atomic.Bool  // head beyond the pool's pace, unconfirmed (ExcludeAhead)
	// While ahead (headTracker.mu held): the pool head it is counted
	// against, its last head and how often it rose since (poolStuckBehind).
	aheadTop, aheadLast int64
	aheadRises          int
	// stuckReadmitAt: when it was last readmitted for rising while the
	// pool head stood still (poolStuckBehind): the others outrun it again
	// only once they rise after that (outrunning).
	stuckReadmitAt int64
	lagExcluded    atomic.Bool
	lagGood        atomic.Int64 // consecutive probes within the lag bound while excluded
	lagFlaps       rejoinFlaps  // readmissions after lag
	healthFlaps    rejoinFlaps  // readmissions after ExcludeUnhealthy
	staleHead      atomic.Int64 // head frozen by a stale fault (0 = not yet seen)
	domain         atomic.Pointer[string]

	independence atomic.Pointer[IndependenceInfo]

	series     rttSeries   // the last minute, per second (console sparklines)
	faultTimer *time.Timer // expires the current fault on time (mu)
}

type methodStats struct {
	method  string // its key: the method, or otherMethod
	latency *window.Latency
	last    lastAnswers // the last three answers (the router's floor)
	rates   *window.Rates
	// since start: attempts that passed their deadline without an answer,
	// and those of them that answered afterwards.
	overdue     atomic.Int64
	lateAnswers atomic.Int64
	backoff     backoffState // the pair's 429 back-off (the endpoint's mu)
	// cannotServeAt: when it last answered that it cannot serve the method
	// (unix nanos, 0 = it serves it), see cannotserve.go.
	cannotServeAt atomic.Int64
	// belowFloorAt: when its answer to the method was last set aside below
	// a read floor (unix nanos, 0 = never; readfloor.go).
	belowFloorAt atomic.Int64
	// hang: an attempt of the method hung on the endpoint (methodhang.go).
	hang methodHang
	// shared: the otherMethod entry, which the methods past the tracked
	// cap share: it stands for no one method.
	shared bool
}

// newEndpoint is endpoint i of the config, in failure domain domain (until
// the independence checks say otherwise).
func newEndpoint(i int, c EndpointConfig, domain string, e *Engine) *endpoint {
	// Its methods' windows count their sub-windows from its own start, so
	// that they age out with its own: a method's figures and the
	// endpoint's cover the same span, whenever the method first came.
	epoch, span := e.now(), e.cfg.Server.StatsWindow
	ep := &endpoint{
		Name:         c.Name,
		Provider:     c.Provider,
		Region:       c.Region,
		index:        i,
		url:          c.URL,
		proxy:        proxyFor(c.Proxy),
		display:      redact.DisplayURL(c.URL, c.PublicURL),
		proxyDisplay: displayProxy(c.Proxy),
		latency:      window.NewLatencyFrom(span, window.DefaultBuckets, e.now, epoch),
		batchPace:    window.NewLatencyFrom(span, window.DefaultBuckets, e.now, epoch),
		queueLatency: newQueueWindow(e.now),
		rates:        window.NewRatesFrom(span, window.DefaultBuckets, e.now, epoch),
	}
	ep.roles.Store(&roleState{role: c.RoleName(), share: c.ShareOrDefault()})
	if c.RoleName() == RoleShadow {
		e.shadows.Add(1)
	}
	ep.shadow = newShadowStats(e)
	ep.methods = newPerMethod(true, func(method string) *methodStats {
		return &methodStats{
			method:  method,
			latency: window.NewLatencyFrom(span, window.DefaultBuckets, e.now, epoch),
			rates:   window.NewRatesFrom(span, window.DefaultBuckets, e.now, epoch),
			shared:  method == otherMethod,
		}
	})
	b := e.cfg.Breaker
	ep.breaker = breaker.New(breaker.Settings{
		Failures: b.Failures, Successes: b.Successes, HalfOpenTrials: b.HalfOpenTrials,
		Cooldown: b.Cooldown, MaxCooldown: b.MaxCooldown,
	}, e.now, func(t breaker.Transition) { e.onBreakerTransition(ep, t) })
	ep.lastRead.Store(e.now().UnixNano()) // no exploration before it had its chance
	ep.heardAt.Store(e.now().UnixNano())
	ep.domain.Store(&domain)
	return ep
}

// Domain is the endpoint's failure domain ("" = unknown, shares with none).
func (ep *endpoint) Domain() string { return *ep.domain.Load() }

// answersClients: not drained, not a shadow, not on the wrong chain (the
// runtime form of canAnswer, cheapest test first: excluded takes ep.mu).
func (ep *endpoint) answersClients() bool {
	return !ep.drained.Load() && !ep.isShadow() && !ep.excluded(ExcludeWrongChain)
}

// stats returns the per-method windows, creating them on first use. Past
// maxTrackedMethods, new methods share the "other" slot.
func (ep *endpoint) stats(method string) *methodStats {
	s, _ := ep.methods.get(method)
	return s
}

func (ep *endpoint) setLastError(msg string, at time.Time) {
	msg = redact.Sanitize(msg, redact.MaxShown)
	ep.mu.Lock()
	ep.lastErr, ep.lastAt = msg, at
	ep.errors.add(msg, at)
	ep.mu.Unlock()
}

// heard notes an answer of any kind at t: the endpoint is not silent.
func (ep *endpoint) heard(t time.Time) {
	ep.unanswered.Store(0)
	ep.heardAt.Store(t.UnixNano())
	ep.refusing.Store(false)
	ep.suspect.Store(false)
	ep.silentAt.Store(0)
	ep.silentRequests.Store(0)
}

// silentNow: it looked hung within the last cooldown and said nothing since
// (see silentAt).
func (ep *endpoint) silentNow(now time.Time, cooldown time.Duration) bool {
	at := ep.silentAt.Load()
	return at != 0 && now.UnixNano()-at < int64(cooldown)
}

// noteRefused marks it refusing when rep is a refused connection, whichever
// attempt met it: a client's, panic routing's past an open breaker (which
// gives the breaker no verdict), a loser's, a probe's. Only an answer
// (heard) clears the mark.
func (ep *endpoint) noteRefused(rep *upstreamReply) {
	if rep.refused {
		ep.refusing.Store(true)
	}
}

// noAnswer notes an attempt that ended failed without an answer (a
// JSON-RPC error answer is one): the endpoint is suspect.
func (ep *endpoint) noAnswer(out outcome) {
	if !out.errorAnswer() {
		ep.suspect.Store(true)
	}
}

// startAttempt counts an attempt in flight at t, and returns the exchanges
// in flight with it.
func (ep *endpoint) startAttempt(t time.Time) int64 { return ep.startAttempts(1, t) }

// startAttempts counts n calls in flight at t, in one exchange (an
// upstream batch's), and returns the exchanges in flight with it.
func (ep *endpoint) startAttempts(n int64, t time.Time) int64 {
	exchanges := ep.exchanges.Add(1)
	if ep.inflight.Add(n) == n {
		ep.busySince.Store(t.UnixNano())
	}
	return exchanges
}

// endAttempts counts the exchange of n calls ended.
func (ep *endpoint) endAttempts(n int64) {
	ep.inflight.Add(-n)
	ep.exchanges.Add(-1)
}

// silentFor is how long the endpoint has had work in flight without saying
// anything (0 when it has none).
func (ep *endpoint) silentFor(now time.Time) time.Duration {
	if ep.inflight.Load() == 0 {
		return 0
	}
	since := max(ep.heardAt.Load(), ep.busySince.Load())
	return now.Sub(time.Unix(0, since))
}

// blocked says whether the endpoint takes no traffic now, whatever the
// method: a 429 back-off or an exclusion by the probes, under one lock.
// With explain it also says why; without, it formats nothing.
func (ep *endpoint) blocked(now time.Time, explain bool) (bool, string) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if now.Before(ep.backoff.until) {
		if !explain {
			return true, ""
		}
		return true, "backing off after HTTP 429 for " + ep.backoff.until.Sub(now).Round(time.Millisecond).String()
	}
	if len(ep.exclusions) == 0 {
		return false, ""
	}
	if !explain {
		return true, ""
	}
	first := ""
	for kind := range ep.exclusions {
		if first == "" || kind < first {
			first = kind
		}
	}
	return true, first + ": " + ep.exclusions[first]
}

// exclusion is the reason for an exclusion of the given kind, if any.
func (ep *endpoint) exclusion(kind string) (string, bool) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	why, ok := ep.exclusions[kind]
	return why, ok
}

// currentFault returns the active fault, clearing it if it has expired.
func (ep *endpoint) currentFault(now time.Time) (f, ended *activeFault) {
	f = ep.fault.Load()
	if f == nil {
		return nil, nil
	}
	if f.expired(now) {
		if ep.fault.CompareAndSwap(f, nil) {
			return nil, f
		}
		return ep.fault.Load(), nil
	}
	return f, nil
}
