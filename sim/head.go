package sim

import "time"

// epoch is the genesis of every simulated chain. It is fixed (not process
// start) so heads look like real chains and agree across processes too.
var epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// trueHead is the process-wide tip for a block time at instant now: every
// upstream with the same BlockTime and clock agrees on it.
func trueHead(now time.Time, blockTime time.Duration) int64 {
	d := now.Sub(epoch)
	if d < 0 {
		return 0
	}
	return int64(d / blockTime)
}

// blockTimestamp is the unix time at which block n was produced.
func blockTimestamp(n int64, blockTime time.Duration) int64 {
	return epoch.Add(time.Duration(n) * blockTime).Unix()
}

// Head is the head this upstream currently reports.
func (u *Upstream) Head() int64 {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.headLocked()
}

func (u *Upstream) headLocked() int64 {
	switch {
	case u.set.fixedHead > 0:
		return u.set.fixedHead
	case u.set.frozen:
		return u.set.frozenAt
	}
	return max(u.trueHead()-u.set.headLag+u.set.headAhead, 0)
}

func (u *Upstream) trueHead() int64 { return trueHead(u.cfg.Clock(), u.cfg.BlockTime) }

// SetHeadLag sets how many blocks/slots this upstream trails the true head;
// a frozen head stays where it is until unfrozen.
func (u *Upstream) SetHeadLag(n int64) { u.update(func(s *settings) { s.headLag = max(n, 0) }) }

// SetHeadFrozen freezes the head at its current value (true) or lets it
// follow the true head again, minus the lag (false).
func (u *Upstream) SetHeadFrozen(frozen bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if frozen && !u.set.frozen {
		u.set.frozenAt = u.headLocked()
	}
	u.set.frozen = frozen
}

// SetHeadFixed makes this upstream report head n whatever the chain does, as
// a misconfigured node or a proxy answering garbage would (n = 0: follow the
// chain again). Blocks are still those of the true chain.
func (u *Upstream) SetHeadFixed(n int64) { u.update(func(s *settings) { s.fixedHead = max(n, 0) }) }

// SetHeadAhead makes this upstream report n blocks/slots beyond the true
// head, advancing with it, as a node of a fork with the same chain id would.
func (u *Upstream) SetHeadAhead(n int64) { u.update(func(s *settings) { s.headAhead = max(n, 0) }) }
