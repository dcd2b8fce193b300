package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The credibility rule: which heads may be the pool's.
//
// One endpoint reporting a bogus head (a misconfigured node, a node of a fork
// with the same chain id, a proxy answering 0x7fffffffffffffff) must not
// mark every healthy endpoint as lagging: a client of any of them would
// have seen nothing wrong. A chain cannot outrun its own pace, so:
//
//   - A head is credible when it is at most what the chain can have made
//     since the pool first saw its head at that height: pool head +
//     paceHeadroom × pace × elapsed (rounded up) + chain.max_head_lag.
//     Elapsed counts from when the pool head reached its height, not from
//     its last sighting: when every endpoint stood still, the first one to
//     move on again is where the chain is, not a jump.
//   - A head beyond that is not the pool's until another endpoint confirms
//     it (reports a head within chain.max_head_lag of it, each carried
//     forward at the pace) and the endpoints agreeing on it outnumber those
//     still agreeing on the pool head. Until then the endpoint reporting it
//     is the one flagged: excluded as "ahead" (an event, in the Snapshot's
//     exclusions), while the others keep their lag against the pool head.
//     It is readmitted as soon as its head is credible again or confirmed.
//   - Stuck endpoints are not outvoted by this: an endpoint advancing at
//     the chain's pace stays credible at every step, so the ones that
//     stopped are lagging, as before. And when the stuck ones are the
//     majority from the start (rpcdash is often started mid-incident), the
//     endpoint flagged ahead keeps rising while the pool head does not
//     move: after probes.recover rises with the pool head standing still
//     it is readmitted and its head becomes the pool's, so the stuck ones
//     show as lagging (a bogus fixed head never rises; a fork's node rises
//     with the chain, and the pool head with it).
//   - With no other endpoint counting (a single-endpoint pool, the others
//     drained), and while the pace is not yet measured (the first rises
//     after start), a head is taken as it comes: there is nothing to
//     measure it against. An endpoint flagged at start stays flagged.
//   - A shadow's head is judged like any other (it may be flagged ahead, its
//     lag is measured), but it counts in none of this: it never sets,
//     confirms or outvotes the pool head, and start-up does not wait for it.
//   - At start, heads are collected until every endpoint that counts has
//     reported one or a probe interval has passed; then the largest group
//     agreeing within chain.max_head_lag sets the pool head (the highest
//     group on a tie, so with no agreement the highest head), and the
//     endpoints above it are flagged ahead.
//
// paceHeadroom is the margin on the measured pace: block times vary, and a
// pace read too low would flag honest endpoints, while a bogus head is
// usually orders of magnitude beyond the chain.
const paceHeadroom = 2

// ExcludeAhead is the exclusion of an endpoint whose head is beyond the
// pool's pace and not confirmed (set and cleared by the engine alone).
const ExcludeAhead = "ahead"

// headUnit is what the chain's heads count: Solana's slots, else blocks.
func (e *Engine) headUnit() string {
	if e.cfg.Chain.Kind == "solana" {
		return "slots"
	}
	return "blocks"
}

// headBound is the highest credible head at now (unbounded while the pool
// head is unknown; the pool head plus chain.max_head_lag while the pace is).
func (e *Engine) headBound(now int64) int64 {
	h := &e.heads
	top := h.top.Load()
	if top == 0 {
		return math.MaxInt64
	}
	return top + paceHeadroom*h.carried(now-h.topAt.Load()) + e.cfg.Chain.MaxHeadLag
}

// carriedHead is ep's last head carried forward at the pace to now.
func (e *Engine) carriedHead(ep *endpoint, now int64) int64 {
	d := now - ep.headAt.Load()
	if d <= 0 {
		return ep.head.Load()
	}
	return ep.head.Load() + int64(math.Round(e.heads.blocksPerSecond()*float64(d)/float64(time.Second)))
}

// judgeHead records head v seen for ep at now, applies the rule and says
// whether the pool head changed.
func (e *Engine) judgeHead(ep *endpoint, v, now int64) bool {
	h := &e.heads
	h.mu.Lock()
	defer h.mu.Unlock()
	if ep.excluded(ExcludeWrongChain) {
		return false // excluded since observeHead looked
	}
	defer func() { ep.topSeen.Store(h.top.Load()) }() // before the unlock
	old := ep.head.Swap(v)
	changed := old != v || ep.headSince.Load() == 0
	switch {
	case v < old && !ep.ahead.Load(): // down from a head flagged ahead is no fall: it was never the chain's
		if ep.fellFrom.Load() == 0 {
			ep.fellAt.Store(now)
		}
		ep.fellFrom.Store(max(ep.fellFrom.Load(), old))
	case v >= ep.fellFrom.Load():
		ep.fellFrom.Store(0)
	}
	if changed {
		ep.headSince.Store(now)
	}
	ep.headAt.Store(now)
	ep.genesisAt.Store(0)
	if !h.settled {
		if h.firstAt == 0 {
			h.firstAt = now
		}
		if !e.startWindowOver(now) {
			return false
		}
		e.settleStart()
		return e.refreshPoolHead()
	}
	if !changed && !ep.ahead.Load() {
		// The same head again (most passive answers): nothing the rule
		// or the pool head could make of it has changed.
		return false
	}
	bound := e.headBound(now)
	credible := v <= bound || !e.othersCount(ep)
	var outrun []*endpoint
	if credible {
		outrun = e.outrunning(ep, v, now, ep.ahead.Load())
		credible = outrun == nil
	}
	switch {
	case credible:
		if ep.ahead.Load() {
			e.setAhead(ep, false, fmt.Sprintf("head %d is within the pool's pace again (pool head %d)", v, h.top.Load()))
		}
	case h.blocksPerSecond() <= 0 && !ep.ahead.Load() && outrun == nil:
		// No pace measured yet (the first rises after start): taken as it
		// comes. An endpoint already flagged stays flagged.
	case outrun != nil:
		e.setAhead(ep, true, fmt.Sprintf("head %d is more than chain.max_head_lag %d ahead of %s, whose heads rise together: not the pool's head until another endpoint confirms it",
			v, e.cfg.Chain.MaxHeadLag, namesBut(outrun, nil)))
	default:
		if ep.ahead.Load() && e.poolStuckBehind(ep, v) {
			ep.stuckReadmitAt = now
			e.setAhead(ep, false, fmt.Sprintf("head %d rose %d times while the pool head stood still at %d: the pool is stuck, not it", v, ep.aheadRises, h.top.Load()))
			break
		}
		if by := e.confirmers(ep, v, now); len(by) > 0 {
			agreed := append(by, ep)
			for _, o := range agreed {
				if o.ahead.Load() {
					e.setAhead(o, false, fmt.Sprintf("head %d confirmed by %s", o.head.Load(), namesBut(agreed, o)))
				}
			}
			break
		}
		top := h.top.Load()
		e.setAhead(ep, true, fmt.Sprintf("head %d is %d %s beyond the pool's pace (pool head %d seen %s ago, %.3g %s/s, chain.max_head_lag %d): not the pool's head until another endpoint confirms it",
			v, v-(bound-e.cfg.Chain.MaxHeadLag), e.headUnit(), top, time.Duration(now-h.topAt.Load()).Round(time.Millisecond), h.blocksPerSecond(), e.headUnit(), e.cfg.Chain.MaxHeadLag))
	}
	return e.refreshPoolHead()
}

// outrunning says whether ep's head v, though within the pool's pace,
// runs away from the chain the other endpoints follow, and which of them
// say so: those that count, whose heads rose recently (they follow a chain
// that moves) and agree among themselves within
// chain.max_head_lag (carried forward) but are more than that below v,
// when they outnumber ep and the endpoints that agree with v. The pace
// bound alone is measured from the pool head, which such an endpoint sets
// itself: one running at up to paceHeadroom times the chain's pace passed
// it at every step, and, as the pace was read from its own rises, faster
// (an audit's 1.9 blocks a second against 1 had the two honest endpoints
// lag-excluded in 6 s and clients handed blocks 35 ahead of the chain).
// Endpoints that stopped do not outvote anyone: the one still advancing
// is where the chain is. nil when v is not outrun.
//
// Rising is having risen within the time the chain takes to make
// chain.max_head_lag blocks: an endpoint advancing while the others stand
// still leads them by more than the lag only after that long. For an
// endpoint already flagged (flagged), twice that: probes see a head a few
// seconds apart, and a runaway readmitted between two sightings flapped;
// once they have stopped that long, a halt, the one still advancing is
// readmitted (it stayed flagged, and clients were served the halted head).
func (e *Engine) outrunning(ep *endpoint, v, now int64, flagged bool) []*endpoint {
	lag := e.cfg.Chain.MaxHeadLag
	pace := e.heads.blocksPerSecond()
	if pace <= 0 {
		return nil
	}
	window := float64(lag) / pace * float64(time.Second)
	if flagged {
		window *= 2
	}
	rising := max(now-int64(window), ep.stuckReadmitAt+1)
	with := 1
	type seen struct {
		ep   *endpoint
		head int64
	}
	var below []seen
	for _, o := range e.endpoints {
		if o == ep || !o.countsForPool() {
			continue
		}
		switch c := e.carriedHead(o, now); {
		case c >= v-lag:
			with++
		case o.headSince.Load() >= rising:
			below = append(below, seen{o, c})
		}
	}
	if len(below) <= with {
		return nil
	}
	slices.SortFunc(below, func(a, b seen) int { return cmp.Compare(a.head, b.head) })
	best, at := 0, 0
	for i, j := 0, 0; j < len(below); j++ {
		for below[j].head-below[i].head > lag {
			i++
		}
		if n := j - i + 1; n > best {
			best, at = n, i
		}
	}
	if best <= with {
		return nil
	}
	out := make([]*endpoint, 0, best)
	for _, s := range below[at : at+best] {
		out = append(out, s.ep)
	}
	return out
}

// poolStuckBehind counts the rises of ep's head (flagged ahead) while the
// pool head stands still, and says whether they reached probes.recover. A
// move of the pool head starts the count again. h.mu is held.
func (e *Engine) poolStuckBehind(ep *endpoint, v int64) bool {
	top := e.heads.top.Load()
	switch {
	case ep.aheadTop == aheadJustFlagged:
		ep.aheadTop = top // the pool head it was flagged against
	case ep.aheadTop != top:
		ep.aheadTop, ep.aheadLast, ep.aheadRises = top, v, 0
		return false
	}
	if v > ep.aheadLast {
		ep.aheadRises++
		ep.aheadLast = v
	}
	return ep.aheadRises >= e.cfg.Probes.Recover
}

// aheadJustFlagged marks an endpoint flagged ahead whose rises are counted
// from its head at the flag, against the pool head it meets next (at start
// the flag comes before the first pool head is set).
const aheadJustFlagged = -1

// othersCount says whether an endpoint other than ep counts for the pool
// head, so that a head can be measured against another's.
func (e *Engine) othersCount(ep *endpoint) bool {
	for _, o := range e.endpoints {
		if o != ep && o.countsForPool() {
			return true
		}
	}
	return false
}

// confirmers are the endpoints that confirm ep's head v beyond the pool's
// pace: those whose heads, carried forward, are within chain.max_head_lag of
// it, when with ep they are at least two and outnumber the endpoints still
// agreeing on the pool head. None if it is not confirmed.
func (e *Engine) confirmers(ep *endpoint, v, now int64) []*endpoint {
	lag := e.cfg.Chain.MaxHeadLag
	topNow := e.heads.top.Load() + e.heads.carried(now-e.heads.topAt.Load())
	var by []*endpoint
	incumbents := 0
	for _, o := range e.endpoints {
		if o == ep || o.head.Load() == 0 || o.drained.Load() || o.isShadow() {
			continue
		}
		c := e.carriedHead(o, now)
		switch {
		case abs(c-v) <= lag:
			by = append(by, o)
		case !o.ahead.Load() && abs(c-topNow) <= lag:
			incumbents++
		}
	}
	if len(by) == 0 || len(by)+1 <= incumbents {
		return nil
	}
	return by
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// namesBut lists the names of eps other than self.
func namesBut(eps []*endpoint, self *endpoint) string {
	out := make([]string, 0, len(eps))
	for _, o := range eps {
		if o != self {
			out = append(out, o.Name)
		}
	}
	return strings.Join(out, ", ")
}

// startWindowOver: every endpoint that counts (shadows do not) has
// reported a head, or a probe interval has passed since the first one did.
func (e *Engine) startWindowOver(now int64) bool {
	if now-e.heads.firstAt >= int64(e.cfg.Probes.Interval) {
		return true
	}
	for _, ep := range e.endpoints {
		if ep.head.Load() == 0 && ep.answersClients() {
			return false
		}
	}
	return true
}

// settleStart decides the first pool head from the heads collected at
// start: the largest group agreeing within chain.max_head_lag, the highest
// on a tie; the endpoints above it are flagged ahead. h.mu is held.
func (e *Engine) settleStart() {
	lag := e.cfg.Chain.MaxHeadLag
	var seen []*endpoint
	for _, ep := range e.endpoints {
		if ep.head.Load() > 0 && !ep.drained.Load() && !ep.isShadow() {
			seen = append(seen, ep)
		}
	}
	var best int64
	bestN := 0
	for _, a := range seen {
		n := 0
		for _, b := range seen {
			if abs(a.head.Load()-b.head.Load()) <= lag {
				n++
			}
		}
		if n > bestN || n == bestN && a.head.Load() > best {
			best, bestN = a.head.Load(), n
		}
	}
	for _, ep := range seen {
		if v := ep.head.Load(); v > best+lag {
			e.setAhead(ep, true, fmt.Sprintf("head %d is %d %s above the %d of %d endpoints that agree on %d at start (chain.max_head_lag %d): not the pool's head until another endpoint confirms it",
				v, v-best, e.headUnit(), bestN, len(seen), best, lag))
		}
	}
	e.heads.settled = true
}

// setAhead flags ep ahead (with the reason shown in its exclusions) or
// clears the flag, with an event when it changes. h.mu is held, so the flag
// and the exclusion change together.
func (e *Engine) setAhead(ep *endpoint, on bool, reason string) {
	ep.mu.Lock()
	_, had := ep.exclusions[ExcludeAhead]
	if on {
		if ep.exclusions == nil {
			ep.exclusions = map[string]string{}
		}
		ep.exclusions[ExcludeAhead] = reason
	} else {
		delete(ep.exclusions, ExcludeAhead)
	}
	ep.mu.Unlock()
	if on && !had {
		ep.aheadTop, ep.aheadLast, ep.aheadRises = aheadJustFlagged, ep.head.Load(), 0
	}
	ep.ahead.Store(on)
	switch {
	case on && !had:
		e.events.add(Event{Type: EventHead, Endpoint: ep.Name, To: ExcludeAhead, Message: "excluded: " + reason})
	case !on && had:
		e.events.add(Event{Type: EventHead, Endpoint: ep.Name, From: ExcludeAhead, Message: "readmitted: " + reason})
	}
}
