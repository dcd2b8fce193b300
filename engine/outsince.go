package engine

import (
	"slices"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// outSince handles candidate i, ranked routable, that a probe or a 429 has
// taken out of routing since (found unhealthy, flagged ahead, backing off,
// the whole endpoint or for this request's method, as rank tells them):
// it is moved where rank would now put it, among the candidates that are
// not routable (tier 1, or 3 while backing off, when its back-off ends;
// failover-only outside panic routing), unused, and true is returned.
// Taken as ranked, the read's failover went to an endpoint a probe had
// found unhealthy or ahead of the chain while a routable one was left.
// An endpoint that answers no client now (drained, a shadow, on the wrong
// chain) rank would not list at all: launchAt turns it away.
func (x *execution) outSince(i int) bool {
	c := x.order[i]
	if c.tier != 0 || !c.ep.answersClients() {
		return false
	}
	now := x.e.now()
	blocked, _ := c.ep.blocked(now, false)
	methodOff := false
	if !blocked {
		methodOff, _ = c.ep.methodBackedOff(x.p.method, now)
	}
	if !blocked && !methodOff {
		return false
	}
	c.tier, c.explore = 1, false
	if off, _ := c.ep.backedOff(now); off || methodOff {
		c.tier, c.backoffEnd = 3, c.ep.backoffEnd(x.p.method, now)
	}
	// As fellBehind: failover-only outside panic routing while a routable
	// candidate is left for a first attempt.
	c.fallback = !x.panicked && x.routableLeft(i)
	x.reseat(i, c)
	return true
}

// offChain turns d, an answer to a read from an endpoint a probe has found
// on the wrong chain while the attempt ran, into a failure: the answer is
// another chain's, and rank lists that endpoint for no request. The read
// fails over as after any failure (the endpoint is not asked again:
// answersClients). A pinned call's answer (a filter lives where it was
// made) and a write's (it was carried out) are left as they are.
func (x *execution) offChain(d *attemptDone) {
	if d.rep.out != outAnswer || x.p.class != jsonrpc.ClassRead || x.p.pinned != nil || !d.a.ep.excluded(ExcludeWrongChain) {
		return
	}
	putBuf(d.rep.body)
	d.rep.body = nil
	d.rep.out, d.rep.cause = outInvalid, "answered after it was found on the wrong chain"
}

// stillRoutable says whether ep, ranked routable for an upstream batch a
// hedge delay ago, still is for it: it answers clients (not drained, a
// shadow or on the wrong chain), no probe or 429 has taken it out since
// (unhealthy, ahead, backing off), and for a batch holding a read of the
// tip it has not fallen behind the head. Ranked once, the batch's hedge
// went to an endpoint found on the wrong chain during the delay, and its
// answer won.
func (r *batchRace) stillRoutable(ep *endpoint, now time.Time) bool {
	if !ep.answersClients() {
		return false
	}
	if blocked, _ := ep.blocked(now, false); blocked {
		return false
	}
	return !ep.lagExcluded.Load() || !slices.ContainsFunc(r.calls, func(c batchCall) bool { return c.p.tip })
}
