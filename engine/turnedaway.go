package engine

// turnedAway moves candidate i, whose breaker turned the request away
// between its ranking and its attempt, to where rank would have put it had
// it seen that breaker (reseat): among panic routing's others as an open
// breaker (tier 2). Another request had taken the half-open trial, or a
// failure opened the breaker meanwhile. Marked used instead, the request
// went on to what came after it: an endpoint lagging the chain's head
// answered the tip with an old block while the current endpoint still
// answered, and a pool whose only routable endpoint was half-open answered
// a client "every candidate refused the attempt" where a direct client
// would have had its answer. An endpoint refusing connections stays used:
// rank never lists it past its breaker either.
func (x *execution) turnedAway(i int) {
	c := x.order[i]
	if c.ep.refusing.Load() {
		return
	}
	c.tier, c.trial, c.explore = 2, false, false
	// rank marks panic routing's others failover-only outside it.
	c.fallback = !x.panicked
	x.reseat(i, c)
}
