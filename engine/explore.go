package engine

import (
	"slices"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// Exploration (router.explore_after) keeps the measurements of an endpoint
// the score steers away from fresh: one read now and then, so that one bad
// stretch in the window cannot starve it for the window's whole span. It
// must cost the client nothing. Where the method is hedged, the endpoint
// due is explored by a hedge sent at once beside the best candidate, which
// runs on to its answer: the client has the first answer, the endpoint is
// measured. When no hedge may go now (paused, the budget, the outstanding
// cap) it waits: a read given to it instead cost the client the
// difference (a page of 20 parallel reads over sims at 20, 60 and 100 ms:
// one page in a hundred took 50 ms, against 30 ms sent to the 20 ms sim
// directly; at one read a second, whose budget funds a hedge every ten or
// so, 5 of 34 measured reads still went to the slower two when given the
// reads the budget could not fund a hedge for). Where the method is not hedged
// (hedging off for it, hedge.max_extra 0, or a domain hedge.same_domain
// keeps hedges out of), a healthy endpoint is given the read when its head
// probes say its figure may be out of date (worthARead); a suspect
// one (its latest attempt got no answer: endpoint.suspect), which would
// make that client wait out its attempt deadline, is not explored at all,
// and its failures age out of the rates window until the ordinary cost
// brings it back.

// exploreWay is how a read explores an endpoint due.
type exploreWay int

const (
	exploreUnknown exploreWay = iota // not asked yet
	exploreByRead                    // given the read: the method is not hedged
	exploreByHedge                   // a hedge at once beside the best
	exploreLater                     // the method is hedged, but no hedge may go now
)

// explore picks the first closed-breaker candidate that has not served a
// read for router.explore_after (at most one per request). way says how
// it may be explored (asked only once one is due). By a hedge it is
// marked for execution.exploreHedge, healthy ones before suspect ones; by
// the read, the first healthy one is moved to the front (the CAS on its
// timestamp makes concurrent requests pick different ones or none), and a
// suspect one is left where it is. It says whether it moved one first.
func (e *Engine) explore(order []candidate, way func() exploreWay) bool {
	if len(order) < 2 {
		return false
	}
	now := e.now().UnixNano()
	suspect, how := -1, exploreUnknown
	for i := 1; i < len(order); i++ {
		ep := order[i].ep
		last, due := e.exploreDue(ep, now)
		if order[i].trial || order[i].cannotServe || order[i].behind || !due || ep.breaker.State() != breaker.Closed {
			continue // one that cannot serve the method learns nothing from it, one behind hands out an old head
		}
		if ep.suspect.Load() || order[i].silent || order[i].held {
			if suspect < 0 {
				suspect = i
			}
			continue
		}
		if how == exploreUnknown {
			how = way()
		}
		// hedge.same_domain = false sends no hedge into the primary's domain.
		if d := ep.Domain(); how != exploreByRead && (e.cfg.Hedge.SameDomain || d == "" || d != order[0].ep.Domain()) {
			if how == exploreByHedge {
				order[i].explore = true // claimed when the hedge goes (claimExplore)
			}
			return false
		}
		if !e.worthARead(order[i], order[0]) {
			continue
		}
		if !ep.lastRead.CompareAndSwap(last, now) {
			return false
		}
		c := order[i]
		copy(order[1:i+1], order[:i])
		order[0] = c
		return true
	}
	if suspect >= 0 {
		order[suspect].explore = true
	}
	return false
}

// worthARead says whether giving c a client read to explore may pay,
// against best, the candidate that read would go to: when c's cost is
// further behind best's than its head probes are behind best's (by more
// than router.tolerance), its figure may hold a stretch that has passed.
// When the probes put it as far behind as its figure does, the read would
// only cost the client the difference, which a client sending to the best
// endpoint directly never pays: at one read a second over sims at 20, 60
// and 100 ms with hedging off, the slower two took 17 of 40 reads. Without
// an answered probe on each there is nothing to judge by, and c is
// explored. Latencies count as at least 1 ms, as in tieCost.
func (e *Engine) worthARead(c, best candidate) bool {
	cp, ok := c.ep.probePace.typical()
	bp, ok2 := best.ep.probePace.typical()
	if !ok || !ok2 || best.restCost <= 0 {
		return true
	}
	behindByProbes := max(cp, time.Millisecond).Seconds() / max(bp, time.Millisecond).Seconds()
	return c.restCost/best.restCost > behindByProbes*(1+e.cfg.Router.Tolerance)
}

// exploreWayFor is how a read of method may explore an endpoint now.
// The request's own checks follow (exploreHedge).
func (e *Engine) exploreWayFor(method string) exploreWay {
	switch {
	case e.cfg.Hedge.MaxExtra == 0 || !e.methods.Hedgeable(method) || !e.hedge.enabledFor(method):
		return exploreByRead
	case e.hedge.roomFor(method, e.methods.Weight(method)):
		return exploreByHedge
	}
	return exploreLater
}

// claimExplore takes ep's turn at exploration for the request about to
// send it a read (the CAS: concurrent requests explore it once).
func (e *Engine) claimExplore(ep *endpoint) bool {
	now := e.now().UnixNano()
	last, due := e.exploreDue(ep, now)
	return due && ep.lastRead.CompareAndSwap(last, now)
}

// exploreDue says whether ep has served no read for router.explore_after at
// now (unix nanos), with the read time it judged by: the value a claim's
// CAS must find for the turn to be this request's.
func (e *Engine) exploreDue(ep *endpoint, now int64) (last int64, due bool) {
	last = ep.lastRead.Load()
	return last, now-last >= int64(e.cfg.Router.ExploreAfter)
}

// exploreNow makes ep due for exploration at once, whatever
// router.explore_after says (exploreDue reads its last read as long ago).
func (ep *endpoint) exploreNow() { ep.lastRead.Store(0) }

// exploreHedge explores the endpoint the router marked
// (candidate.explore) with a hedge sent at once beside the primary, charged
// to the budget as any hedge: the first answer wins, and the client never
// waits on the explored one. When no hedge may be sent after all (the
// budget or the saturation guard since rank asked) it is not explored.
func (x *execution) exploreHedge() {
	e := x.e
	i := slices.IndexFunc(x.order, func(c candidate) bool { return c.explore })
	if i < 0 || x.used[i] || len(x.live) == 0 || !e.cfg.Hedge.SameDomain && x.sharesDomain(x.order[i].ep) {
		return
	}
	w := x.p.weight
	ok, release := e.hedge.tryFire(x.p.method, w, 1, e.inflight.Load())
	if !ok {
		return
	}
	ep := x.order[i].ep
	if !e.claimExplore(ep) || x.launchAt(i, roleHedge, release, true) == nil {
		release()
		e.hedge.refund(w, 1)
		return
	}
	x.countHedge(ep, w)
	x.explores++
}
