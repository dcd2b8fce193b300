package engine

// outSince handles candidate i, ranked routable, that a probe or a 429 has
// taken out of routing since (found unhealthy, flagged ahead, backing off):
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
	if blocked, _ := c.ep.blocked(now, false); !blocked {
		return false
	}
	c.tier, c.explore = 1, false
	if off, _ := c.ep.backedOff(now); off {
		c.tier, c.backoffEnd = 3, c.ep.backoffEnd(x.p.method, now)
	}
	// As fellBehind: failover-only outside panic routing while a routable
	// candidate is left for a first attempt.
	c.fallback = !x.panicked && x.routableLeft(i)
	x.reseat(i, c)
	return true
}
