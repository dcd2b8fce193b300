package engine

// A canary ([[endpoints]] role = "canary") is the seed's traffic split: it
// takes share of the client reads' first attempts, drawn at random per
// read, and is otherwise a standby: a last-resort failover target, not a
// hedge target while the primaries are ready, never given a write the
// primaries can take. A read it fails fails over like any attempt, so a
// canary causes no client error a direct client would not have seen. Only a
// routable canary (closed breaker, not lagging, not backing off) takes its
// share: a canary in trouble does not get first attempts just because its
// number came up. A read first given to a half-open trial or to an
// endpoint being explored is not drawn for (rank).

type canaryDraw struct {
	ep    *endpoint
	share float64
}

// canaryFirst moves to the front of a read's order the canary one draw
// picks, if any: with several canaries, each takes its own share.
func (e *Engine) canaryFirst(order []candidate, canaries []canaryDraw) {
	x := e.rand()
	var chosen *endpoint
	for _, c := range canaries {
		if x < c.share {
			chosen = c.ep
			break
		}
		x -= c.share
	}
	if chosen == nil {
		return
	}
	for i, c := range order {
		if c.ep != chosen {
			continue
		}
		if c.tier != 0 || c.trial || c.silent || c.cannotServe || c.behind {
			return // a canary in trouble (or behind, for a read showing the head) takes no first attempts
		}
		c.fallback = false
		copy(order[1:i+1], order[:i])
		order[0] = c
		return
	}
}
