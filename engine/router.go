package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// The router's score is a cost in milliseconds, lower is better:
//
//	cost = latency × (1 + error_penalty × failure_rate) × (1 + in_flight) + lag × lag_penalty
//
// latency is the endpoint's p50 for this method over the rolling window,
// blended half and half with its p90 once the window holds fullSamples (a
// p90 of five samples is one unlucky answer). The endpoint's all-method
// window (probes feed it) stands in while the method has fewer than
// fullSamples, the median of its first answers while it has fewer than
// minRouteSamples (firstLatency), and the pool's best figure while it has
// none, so a new endpoint is tried rather than starved. failure_rate is failures ÷
// attempts over the window once it holds minRateAttempts: a run of
// consecutive errors is the breaker's to judge, the score weighs sustained
// flakiness. The in-flight factor makes the router least-loaded under
// concurrency and drains traffic from an endpoint whose requests pile up (a
// hang) before any of them times out. Endpoints whose cost is within
// router.tolerance of the best, and of each other without the load factor,
// are equals and take turns; the rest follow by cost, config order breaking
// ties. A healthy endpoint that has not served a read for
// router.explore_after is explored (explore.go), so that one bad stretch
// in the window cannot starve it for the window's whole span.
const (
	minRouteSamples = 5
	fullSamples     = 50
	minRateAttempts = 20
)

type candidate struct {
	ep   *endpoint
	fig  routeFigure
	cost float64 // ms: the whole cost (scoreParts)
	// tieCost: the cost with the latency figure taken as at least 1 ms,
	// what decides equals (rotateEquals): sub-millisecond latency is noise,
	// an error or load factor on it is not.
	tieCost float64
	// restCost: tieCost without the load factor. Equals are equal at rest
	// too: a leader answering 20 at once at 28 ms, with 18 in flight, was
	// within tolerance of an idle 65 ms endpoint by its load alone, and
	// took turns with it: 1 to 3 % of a page of 20 parallel reads went to
	// the 65 ms one, and a page took 35-53 ms against 31 direct (seeds
	// audit G1). Past tolerance at rest, the cost alone orders them.
	restCost float64
	trial    bool // half-open: this request would be one of its trials
	// tier > 0: not routable now (1: lagging, behind the block asked for or
	// unhealthy; 2: breaker open; 3: backing off after a 429, the whole
	// endpoint or this method on it), taken by panic routing or when
	// nothing else can take the request, lowest tier first; otherwise only
	// as a failover after every routable candidate (fallback).
	tier int
	// stale: in tier 1 because its head is behind what the read needs
	// (lagging on a read of the tip, or below the block asked for): its
	// answer would be an old one, relayed as any other. Panic routing takes
	// an open breaker that still answers before it (panicOrder), and no
	// hedge or deadline race goes to it while a current endpoint answers
	// (execution.noStale).
	stale bool
	// backoffEnd: in tier 3, when its back-off for this method ends (panic
	// routing takes the soonest first).
	backoffEnd time.Time
	// fallback: only for failover, after the routable candidates: a standby
	// while the primaries can take the request (standby.go), or an
	// endpoint that is not routable now outside panic routing.
	fallback bool
	// explore: a suspect endpoint due for exploration. It keeps its place;
	// the request sends it an immediate hedge if hedging allows one
	// (execution.exploreHedge), else it is not explored.
	explore bool
	// silent: it looks hung (endpoint.silentAt). Its latency figure holds
	// only the answers it gave before, so its cost cannot say it went
	// silent: it goes after every candidate that is not.
	silent bool
	// hung: an attempt of this method hung on it lately, and it has not
	// answered the method since (methodhang.go): silent for the method.
	hung bool
	// held: breaker.max_open_share holds its breaker closed (heldClosedByCap):
	// it failed enough to open, and its cost cannot say so (its failure rate
	// is 0 below min_attempts, then diluted by its past successes). It goes
	// with the silent, after every candidate that is not.
	held bool
	// cannotServe: it answered lately that it cannot serve this method
	// (cannotserve.go): after the candidates that can, before the silent.
	cannotServe bool
	// behind: the read's answer is its endpoint's head (an EVM latest
	// block) and the endpoint's known head is behind the pool head (lagOf),
	// or its answer to the method went below a read floor within
	// belowFloorHold: after the endpoints at it, before those that cannot
	// serve the method (latestblock.go, readfloor.go).
	behind bool
}

// ranking is the router's answer for one request.
type ranking struct {
	order   []candidate
	skipped []string // with explain: why endpoints were left out, for the error a client sees
	panic   bool     // order goes past the routable endpoints (panic routing)
	// preferred: the endpoint the request was to go to first (write
	// affinity) is first.
	preferred bool
}

// rank orders the endpoints that may take this request. explain collects
// why endpoints were left out, and only that (no order, no side effects); the request path asks for it only when it
// needs to tell the client, so a pool with an endpoint out formats nothing
// per request. Drained endpoints, endpoints on the wrong chain and
// endpoints refusing connections (an open breaker on hard evidence) are
// never in the order; the other unroutable ones follow the routable ones
// in panic routing, or when no routable one can take the request, and
// otherwise as failover-only fallbacks after them. prefer.ep, when routable
// for this request, goes first (write affinity, affinity.go).
// showsHead: the read's answer is its endpoint's head (latestblock.go).
func (e *Engine) rank(method string, cls jsonrpc.Class, tipDependent, showsHead bool, minHead int64, prefer affinityPick, explain bool) ranking {
	now := e.now()
	var r ranking
	cands := make([]candidate, 0, len(e.endpoints))
	var extras []candidate
	best := -1.0
	routable, pool := 0, 0
	// Standbys are kept aside until the primaries call for them (standby.go).
	var standbyCands, standbyExtras []candidate
	bestStandby := -1.0
	standbyRoutable, standbys := 0, 0
	var prim primaryCount
	primReady := 0 // primaries that can take this request, trials aside
	skip := func(ep *endpoint, why func() string) {
		if explain {
			r.skipped = append(r.skipped, ep.Name+": "+why())
		}
	}
	var canaries []canaryDraw
	var refusers []candidate // open breakers of endpoints refusing connections
	for _, ep := range e.endpoints {
		if ep.drained.Load() {
			skip(ep, func() string { return "drained" })
			continue
		}
		rs := ep.roleState()
		if rs.role == RoleShadow {
			skip(ep, func() string { return "shadow (receives mirrored reads only)" })
			continue
		}
		// Standbys and canaries are kept aside (standby.go, canary.go).
		aside := rs.role == RoleStandby || rs.role == RoleCanary
		if why, wrong := ep.exclusion(ExcludeWrongChain); wrong {
			skip(ep, func() string { return ExcludeWrongChain + ": " + why })
			continue
		}
		if aside {
			standbys++
		} else {
			pool++
		}
		ok, trial := ep.breaker.Routable()
		if ok && trial && e.probeTrials.Load() {
			// Probes run the half-open trials; clients never experiment.
			ok = false
		}
		if !ok && ep.refusing.Load() {
			skip(ep, func() string { return fmt.Sprintf("refusing connections (breaker %s)", ep.breaker.State()) })
			refusers = append(refusers, candidate{ep: ep, tier: 2, fig: unmeasured})
			continue
		}
		blocked, why := ep.blocked(now, explain)
		if !blocked && ok && !ep.lagExcluded.Load() {
			switch {
			case aside:
				standbyRoutable++
			case !trial:
				routable++
				if !e.heldClosedByCap(ep, now) {
					prim.ready++
				}
			default:
				routable++
			}
		}
		c := candidate{ep: ep, trial: trial, fig: unmeasured}
		var methodOff bool
		var methodUntil time.Time
		if !blocked {
			// Not counted out of the routable share above: the endpoint
			// serves its other methods.
			methodOff, methodUntil = ep.methodBackedOff(method, now)
		}
		switch {
		case blocked:
			c.tier = 1
			if off, _ := ep.backedOff(now); off {
				c.tier, c.backoffEnd = 3, ep.backoffEnd(method, now)
			}
			skip(ep, func() string { return why })
		case methodOff:
			c.tier, c.backoffEnd = 3, methodUntil
			skip(ep, func() string {
				return "backing off after HTTP 429 for " + methodUntil.Sub(now).Round(time.Millisecond).String() + " (" + method + " only)"
			})
		case minHead > 0 && ep.head.Load() > 0 && ep.head.Load() < minHead && e.heads.top.Load() >= minHead:
			c.tier, c.stale = 1, true
			skip(ep, func() string {
				return fmt.Sprintf("head %d is below the requested block %d", ep.head.Load(), minHead)
			})
		case tipDependent && ep.lagExcluded.Load():
			c.tier, c.stale = 1, true
			skip(ep, func() string { return "lagging behind the chain head" })
		case !ok:
			c.tier, c.trial = 2, false
			skip(ep, func() string { return fmt.Sprintf("breaker %s", ep.breaker.State()) })
		}
		if c.tier != 0 {
			// Its latency is read only for panic routing.
			if aside {
				standbyExtras = append(standbyExtras, c)
			} else {
				extras = append(extras, c)
			}
			continue
		}
		ms, _ := ep.methods.lookup(method) // nil while the method is new to ep
		if !explain {
			c.cannotServe = ms.cannotServe(now, e.cfg.Breaker.Cooldown)
			c.hung = ms != nil && ms.hang.held(now)
			c.behind = showsHead && e.lagOf(ep) > 0 || ms.wentBelowLately(now)
		}
		fig, ok := ep.routeLatencyOf(ms)
		if ok {
			c.fig = fig
			b := &best
			if aside {
				b = &bestStandby
			}
			if *b < 0 || fig.lat < *b {
				*b = fig.lat
			}
		}
		if aside {
			if rs.role == RoleCanary {
				canaries = append(canaries, canaryDraw{ep: ep, share: rs.share})
			}
			standbyCands = append(standbyCands, c)
			continue
		}
		if !c.trial {
			primReady++
		}
		cands = append(cands, c)
	}
	prim.pool = pool
	global := standbys > 0 && e.needsStandby(prim)
	withStandby := standbys > 0 && (global || primReady == 0)
	if withStandby {
		cands = append(cands, standbyCands...)
		extras = append(extras, standbyExtras...)
		if bestStandby >= 0 && (best < 0 || bestStandby < best) {
			best = bestStandby
		}
	}
	if global {
		// Standbys in service are in the pool panic routing weighs, so
		// healthy ones keep it off.
		routable, pool = routable+standbyRoutable, pool+standbys
	}
	if explain {
		// Asked only for the reasons (an error message): ordering would
		// rotate equals and mark endpoints explored that get nothing.
		return r
	}
	if best < 0 {
		best = 0
	}
	e.score(cands, best)
	slices.SortStableFunc(cands, func(a, b candidate) int {
		// Trials first for reads (a read can fail over if the trial fails);
		// last for writes, which must not be an experiment.
		if a.trial != b.trial {
			if (cls == jsonrpc.ClassRead) == a.trial {
				return -1
			}
			return 1
		}
		return byStandingThenCost(a, b)
	})
	r.order = e.rotateEquals(cands)
	// An endpoint breaker.max_open_share holds closed failed enough to open:
	// like an open one, it keeps the normal order, which ranks it last.
	r.preferred = prefer.ep != nil && !e.heldClosedByCap(prefer.ep, now) &&
		!(cls == jsonrpc.ClassWrite && !prefer.firm && affinityYields(r.order, prefer.ep)) && preferFirst(r.order, prefer.ep, cls)
	if withStandby && len(standbyCands) > 0 {
		e.useStandby(now, standbyCands, func() string {
			if global {
				return e.standbyWhy(prim)
			}
			return fmt.Sprintf("no primary can take this %s request (primaries routable %d of %d, none for this request)", method, routable, pool)
		})
	}
	explored := cls == jsonrpc.ClassRead && !r.preferred && e.explore(r.order, func() exploreWay { return e.exploreWayFor(method) })
	if !withStandby && len(standbyCands) > 0 {
		// Failover only: a read whose primaries all failed is still
		// answered, as the primaries alone would not.
		if bestStandby < 0 {
			bestStandby = best
		}
		e.score(standbyCands, bestStandby)
		slices.SortStableFunc(standbyCands, byStandingThenCost)
		for i := range standbyCands {
			standbyCands[i].fallback = true
		}
		r.order = append(r.order, standbyCands...)
	}
	// The canary's draw never displaces a read handed to an endpoint to
	// explore it, nor a half-open trial put first: both are rare and needed.
	if cls == jsonrpc.ClassRead && len(canaries) > 0 && !explored && !r.preferred && !(len(r.order) > 0 && r.order[0].trial) {
		e.canaryFirst(r.order, canaries)
	}
	if panicking := e.decidePanic(routable, pool, now); len(extras) > 0 {
		for i := range extras {
			if fig, ok := extras[i].ep.routeLatency(method); ok {
				extras[i].fig = fig
			}
		}
		e.score(extras, best)
		slices.SortStableFunc(extras, func(a, b candidate) int {
			if pa, pb := e.panicOrder(a, now), e.panicOrder(b, now); pa != pb {
				return pa - pb
			}
			// The endpoint whose back-off ends first is the likeliest to
			// answer: its limit's window is the furthest gone.
			if c := a.backoffEnd.Compare(b.backoffEnd); c != 0 {
				return c
			}
			return byCost(a, b)
		})
		if panicking || len(cands) == 0 {
			r.panic = true
		} else {
			// Failover only, after every routable candidate: a read (or a
			// write that provably never left) whose routable endpoints all
			// failed is still answered by one whose breaker is open but
			// which may well answer, as a client talking to it would be.
			// One backing off after a 429 is asked only once its back-off
			// is over (pickAmong): it asked to be left alone until then,
			// and a request to it spends the quota that limits it. Left
			// out, a read whose one routable endpoint hung waited for the
			// request's deadline and failed, though the other had long
			// been back (backOffLeft).
			for i := range extras {
				extras[i].fallback = true
			}
		}
		r.order = append(r.order, extras...)
	}
	if len(refusers) > 0 && allBackingOff(r.order) {
		// Every endpoint left refuses connections or is backing off after
		// a 429 (it asked to be left alone). Only a connection tells when
		// one refusing is back (a probe may be seconds away), and a refused
		// one costs no more than a direct client's: they are asked first,
		// past their open breakers, so the first request after the outage
		// is answered rather than refused for the others' rate limit.
		r.order, r.panic = append(refusers, r.order...), true
	}
	return r
}

// allBackingOff says whether every candidate of order is backing off after
// a 429 (true for none).
func allBackingOff(order []candidate) bool {
	for _, c := range order {
		if c.tier != 3 {
			return false
		}
	}
	return true
}

// panicOrder is where a candidate that is not routable goes among the
// others, lowest first: unhealthy ones, then open breakers of endpoints
// heard from within breaker.cooldown (slow or failing, but current), then
// the stale, then back-offs, then open breakers of endpoints gone quiet.
// A stale answer is relayed as if current, so it comes after an endpoint
// that still answers, but before one that may never: then an old answer
// is the only one there is. An endpoint backing off answered (its 429) a
// moment ago; one gone quiet costs the read its attempt deadline, after
// which the race went to the one backing off all the same, spending the
// same quota: asked first, a hung tail sent 23 % of a minute's reads
// through its deadline (430 ms, 3 s while cold) before flaky, backing off
// a method after one of its 2 % 429s, answered them in 67 ms.
func (e *Engine) panicOrder(c candidate, now time.Time) int {
	switch {
	case c.stale:
		return 3
	case c.tier == 2 && !e.goneQuiet(c.ep, now):
		return 2
	case c.tier == 3:
		return 4
	case c.tier == 2:
		return 5
	}
	return c.tier
}

// goneQuiet: the endpoint has said nothing (no answer of any kind) for
// breaker.cooldown.
func (e *Engine) goneQuiet(ep *endpoint, now time.Time) bool {
	return now.Sub(time.Unix(0, ep.heardAt.Load())) >= e.cfg.Breaker.Cooldown
}

// hangsNow: the endpoint has gone quiet, or has said nothing since an
// attempt of it passed its deadline (an endpoint that answers errors, or
// late, is heard). Heard within the cooldown alone kept a hung endpoint
// "current" for the first 10 s after its breaker opened: with steady
// drained and tail hung, flaky's 500s waited tail's deadline for the
// method (2.85 s, learnt from its heavy tail) before flaky was asked
// again. Panic routing keeps goneQuiet: a slow endpoint past its deadline
// still goes before a stale one.
func (e *Engine) hangsNow(ep *endpoint, now time.Time) bool {
	return e.goneQuiet(ep, now) || ep.overdueAt.Load() > ep.heardAt.Load()
}

// preferFirst moves ep to the front of the routable candidates when it is
// one of them in good standing (not looking hung, able to serve the
// method) and, for a write, not a half-open trial: a write must not be an
// experiment. It says whether ep is first.
func preferFirst(order []candidate, ep *endpoint, cls jsonrpc.Class) bool {
	for i, c := range order {
		if c.ep != ep {
			continue
		}
		if c.standing() != 0 || c.trial && cls != jsonrpc.ClassRead {
			return false
		}
		copy(order[1:i+1], order[:i])
		order[0] = c
		return true
	}
	return false
}

// score turns each candidate's latency into its cost (see the top of the
// file); best stands in for an endpoint with no latency figure yet.
func (e *Engine) score(cands []candidate, best float64) {
	now := e.now()
	least := 1.0 // the least tail share of the measured candidates, at its upper end
	for i := range cands {
		if high, ok := cands[i].fig.takeTail(best); ok {
			least = min(least, high)
		}
	}
	for i := range cands {
		c := &cands[i]
		c.silent = c.hung || c.ep.silentNow(now, e.cfg.Breaker.Cooldown)
		c.held = e.heldClosedByCap(c.ep, now)
	}
	// The leader is taken among the candidates in good standing: one that
	// cannot serve the method, or looks hung, is no measure of the others.
	lead := concurrencyLeader(len(cands), func(i int) float64 {
		if cands[i].standing() != 0 {
			return -1
		}
		return cands[i].fig.lat
	})
	for i := range cands {
		c := &cands[i]
		p := e.scoreParts(c.ep, c.fig, best, least, i == lead)
		c.cost = float64(p.Cost) / float64(time.Millisecond)
		lat := float64(p.Latency) / float64(time.Millisecond)
		c.tieCost = c.cost + max(1-lat, 0)*p.ErrorFactor*p.TailFactor*p.LoadFactor
		c.restCost = c.tieCost / p.LoadFactor
	}
}

// standing ranks what the cost cannot say: 0 for a candidate in good
// standing, 1 when it is behind the pool head on a read that shows it (an
// older block, set aside when below one already returned), 2 when it
// cannot serve the method (a quick failure over), 3 when it looks hung (a
// wait for its deadline).
func (c candidate) standing() int {
	switch {
	case c.silent || c.held:
		return 3
	case c.cannotServe:
		return 2
	case c.behind:
		return 1
	}
	return 0
}

// byStandingThenCost puts the silent after the others, those that cannot
// serve the method after those that can, and those behind on a read that
// shows the head after those at it, each by cost.
func byStandingThenCost(a, b candidate) int {
	if d := a.standing() - b.standing(); d != 0 {
		return d
	}
	return byCost(a, b)
}

func byCost(a, b candidate) int {
	switch {
	case a.cost < b.cost:
		return -1
	case a.cost > b.cost:
		return 1
	}
	return a.ep.index - b.ep.index
}

// CostTies says whether a routing cost (ms) is among the best's equals:
// within router.tolerance of it, and 1 ms of noise (sub-millisecond noise
// is not a difference). The router takes turns among such endpoints; the
// drill judges "the best" by the same rule.
func CostTies(cost, best, tolerance float64) bool {
	return cost <= best*(1+tolerance)+1
}

// equalAtRest says whether two costs without load are within tolerance of
// the lesser.
func equalAtRest(a, b, tolerance float64) bool {
	return CostTies(max(a, b), min(a, b), tolerance)
}

// rotateEquals lets the endpoints within tolerance of the best take turns
// at the front.
func (e *Engine) rotateEquals(c []candidate) []candidate {
	start := 0
	for start < len(c) && c[start].trial {
		start++
	}
	if len(c)-start < 2 {
		return c
	}
	n := 1
	for start+n < len(c) && !c[start+n].trial && c[start+n].standing() == c[start].standing() && CostTies(c[start+n].tieCost, c[start].tieCost, e.cfg.Router.Tolerance) &&
		equalAtRest(c[start+n].restCost, c[start].restCost, e.cfg.Router.Tolerance) {
		n++
	}
	if n < 2 {
		return c
	}
	k := int(e.rr.Add(1)-1) % n
	eq := c[start : start+n]
	rot := append(append(make([]candidate, 0, n), eq[k:]...), eq[:k]...)
	copy(eq, rot)
	return c
}

// routeFigure is what the score takes from an endpoint's latency window for
// a method: its latency figure in milliseconds (-1: unmeasured, the pool's
// best stands in), which window that came from (its tail share is taken
// from it against the pool's best, scoreParts).
type routeFigure struct {
	lat    float64
	window *window.Latency // what the tail share is taken from (nil: unmeasured)
	tail   float64         // its tail share against the pool's best (score)
	source string
}

var unmeasured = routeFigure{lat: -1}

// routeLatency is the endpoint's routeFigure for method.
func (ep *endpoint) routeLatency(method string) (routeFigure, bool) {
	ms, _ := ep.methods.lookup(method)
	return ep.routeLatencyOf(ms)
}

// routeLatencyOf is routeLatency with the method's stats already looked up
// (nil when the endpoint has none for it).
func (ep *endpoint) routeLatencyOf(ms *methodStats) (routeFigure, bool) {
	lat, src, w, last, ok := ep.usualPace(ms)
	prior := ep.priorPace.Load()
	if !ok {
		if prior > 0 {
			return routeFigure{lat: float64(prior) / float64(time.Millisecond), source: scoreFromEndpoint}, true
		}
		return ep.firstLatency()
	}
	if prior > 0 {
		ep.priorPace.Store(0) // measured again
	}
	if recent, ok := last.median(); ok {
		lat = max(lat, recent) // the window remembers minutes; the last answers say now
	}
	if src == scoreFromEndpoint {
		if slow, ok := methodSlowerThan(ms, lat); ok {
			lat, w, src = slow, ms.latency, scoreFromMethod
		}
	}
	return routeFigure{lat: float64(lat) / float64(time.Millisecond), window: w, source: src}, true
}

// methodSlowerThan is the median of the method's own attempts on the
// endpoint, those cut short counted as taking longer (Kaplan–Meier; a lower
// bound when they leave it short), when they are minRouteSamples or more
// and it is above lat, the endpoint's figure the router would otherwise
// read (the method's own answers being fewer than fullSamples). A method
// slow on one endpoint alone was routed by that endpoint's other methods:
// eth_getLogs answered in 5 to 8 s on one endpoint and 50 ms on the
// others kept going to it at its 49.7 ms, 4 answers and 8 attempts cut
// short by the hedges that beat them its own, and clients' p99 was 5.2 s
// where a client of another endpoint had 69 ms.
func methodSlowerThan(ms *methodStats, lat time.Duration) (time.Duration, bool) {
	if ms == nil {
		return 0, false
	}
	if exact, cens := ms.latency.Counts(); exact+cens < minRouteSamples {
		return 0, false
	}
	if med := ms.latency.QuantileCensored(0.5); med > lat {
		return med, true
	}
	return 0, false
}

// firstLatency is the figure of an endpoint whose window holds fewer than
// minRouteSamples answers but some (the first probes, from start): their
// median, with no tail share. A cold pool's first write taken as the first
// endpoint in the config went to one 750 ms slower than the others the
// probes had already timed. Reads took turns among the endpoints until
// each had five answers: at one read a second over sims at 20, 60 and
// 100 ms, 4 of the first 6 went to the slower two, though the probes had
// timed all three; exploration measures the others (by hedge, costing the
// client nothing, where the method is hedged).
func (ep *endpoint) firstLatency() (routeFigure, bool) {
	n, med, _ := ep.latency.QuantilePair(0.5, 0.9)
	if n == 0 {
		return unmeasured, false
	}
	return routeFigure{lat: float64(med) / float64(time.Millisecond), source: scoreFromEndpoint}, true
}

// usualLatency is the endpoint's usual pace for a method, from the window
// (the method's once it holds fullSamples answers, else the endpoint's):
// the median, blended with the p90 once the window is full. The last
// answers of the same figure come with it.
func (ep *endpoint) usualLatency(ms *methodStats) (time.Duration, string, *lastAnswers, bool) {
	lat, src, _, last, ok := ep.usualPace(ms)
	return lat, src, last, ok
}

// usualPace is usualLatency with the window it read.
func (ep *endpoint) usualPace(ms *methodStats) (time.Duration, string, *window.Latency, *lastAnswers, bool) {
	w, src, last := ep.latency, scoreFromEndpoint, &ep.last
	if ms != nil && ms.latency.Count() >= fullSamples {
		w, src, last = ms.latency, scoreFromMethod, &ms.last
	}
	n, lat, p90 := w.QuantilePair(0.5, 0.9)
	if n < minRouteSamples {
		return 0, "", nil, nil, false
	}
	if n >= fullSamples {
		lat = (lat + p90) / 2
	}
	return lat, src, w, last, true
}

// noRouteError explains to a client why nothing could take its request.
func noRouteError(r ranking) *jsonrpc.Error {
	msg := "no routable endpoint"
	if len(r.skipped) > 0 {
		msg += ": " + strings.Join(r.skipped, "; ")
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeUpstream, Message: msg}
}
