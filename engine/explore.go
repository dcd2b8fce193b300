package engine

import (
	"slices"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// Exploration (router.explore_after) keeps the measurements of an endpoint
// the score steers away from fresh: one read now and then, so that one bad
// stretch in the window cannot starve it for the window's whole span. It
// must cost the client nothing. A healthy endpoint is simply given the next
// read. A suspect one (its latest attempt got no answer: endpoint.suspect)
// would make that client wait out its attempt deadline, so it is explored
// only by a hedge sent at once beside the best candidate, when hedging
// allows one; otherwise not at all, and its failures age out of the rates
// window until the ordinary cost brings it back.

// explore moves to the front the first closed-breaker candidate that has
// not served a read for router.explore_after (at most one per request: the CAS on
// its timestamp makes concurrent requests pick different ones or none).
// A suspect endpoint is never moved first: the first one due is only
// marked, for an immediate hedge (execution.exploreHedge). It says whether
// it moved one first.
func (e *Engine) explore(order []candidate) bool {
	if len(order) < 2 {
		return false
	}
	now := e.now().UnixNano()
	suspect := -1
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

// exploreHedge explores the suspect endpoint the router marked
// (candidate.explore) with a hedge sent at once beside the primary, charged
// to the budget as any hedge: the first answer wins, and the client never
// waits on the suspect one. When no hedge may be sent (the budget, the
// saturation guard) it is not explored.
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
