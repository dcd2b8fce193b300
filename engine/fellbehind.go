package engine

import "slices"

// fellBehind handles candidate i of a read of the chain's tip, ranked
// current, whose endpoint has fallen behind the head since (a probe
// lag-excluded it while the read was in flight): it is moved where rank
// would now put it, among the candidates that are not routable as a stale
// one (tier 1, after every routable candidate; failover-only outside panic
// routing), unused, and true is returned. Taken as ranked, a failover, a
// hedge or a deadline's race went to it while a current endpoint was left,
// and its old answer was relayed as current.
func (x *execution) fellBehind(i int) bool {
	c := x.order[i]
	if !x.p.tip || c.tier != 0 || c.stale || !c.ep.lagExcluded.Load() {
		return false
	}
	c.tier, c.stale, c.explore = 1, true, false
	// rank marks the candidates that are not routable failover-only
	// outside panic routing, which it enters when none is routable: a
	// first attempt left with no routable candidate takes this one.
	c.fallback = !x.panicked && x.routableLeft(i)
	x.reseat(i, c)
	return true
}

// routableLeft says whether a routable candidate other than i is left
// unused for a first attempt or a hedge.
func (x *execution) routableLeft(i int) bool {
	for j, c := range x.order {
		if j != i && !x.used[j] && c.tier == 0 && !c.fallback {
			return true
		}
	}
	return false
}

// behindAgain says whether asking ep again for this read (retryFailed,
// relaunch: an endpoint it has asked already) would get it an old answer
// while a live attempt on a current endpoint may still answer (noStale):
// rank put ep among the stale, or the read is of the tip and ep has
// fallen behind the head since. It waits then, as a stale candidate's
// race does (launchRace). Asked again as ranked, an endpoint that failed
// and fell behind mid-read answered the tip with an old block at the
// current one's first deadline.
func (x *execution) behindAgain(ep *endpoint) bool {
	stale := x.p.tip && ep.lagExcluded.Load()
	if i := slices.IndexFunc(x.order, func(c candidate) bool { return c.ep == ep }); i >= 0 && x.order[i].stale {
		stale = true
	}
	return stale && x.noStale()
}
