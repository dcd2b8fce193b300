package engine

import (
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A read can name a block or slot that only the endpoint at the pool head
// has yet: a Solana client passes as minContextSlot the slot of its last
// answer, which rpcdash took from that endpoint (or raised to its floor).
// When that endpoint then fails the read (a 429, its own error), the
// others, a slot or two behind, answer that they have not reached it
// (-32016, "header not found"): set aside as behind (placeNotYet), and
// relayed at once when no endpoint did better. 39 of 40 such reads failed
// so beside two endpoints 2 slots behind, where a client of either alone
// never asks for a slot it was not given, and either had it 0.8 s later.
// Now the endpoint behind, its last known head below the block or the pool
// head, is asked again once the chain has likely made the block (the
// blocks or slots it lacks at the pace, doubling), up to maxCatchUps
// times, while that pause is at most maxCatchUpPause (twice it for the
// second) and the request has twice it left; its answer then is the
// read's, and the not-yet error is relayed only when it has not caught up
// by then (3 × maxCatchUpPause at most). Not on an endpoint backing off
// after a 429 (a read is never sent to one). A block that takes longer (an
// EVM chain's 2 s and more: a read beside an endpoint a 3 s block behind
// waited 3 to 5.8 s for it) is relayed at once as before.

// maxCatchUps bounds the asks again of an endpoint behind for one read.
const maxCatchUps = 2

// maxCatchUpPause bounds the first pause before such an ask: a few Solana
// slots, less than an EVM block of 2 s.
const maxCatchUpPause = 1500 * time.Millisecond

// catchUpPause is how long the read waits before asking again the
// endpoint whose not-yet error is the answer set aside; false when it is
// no such answer, the read has asked enough, or has no time for it.
func (x *execution) catchUpPause() (time.Duration, bool) {
	f := x.fallback
	if f == nil || f.rep.lacksYet == 0 || !f.rep.info.HasError || x.p.class != jsonrpc.ClassRead || x.catchUps >= maxCatchUps {
		return 0, false
	}
	pace := x.e.heads.blocksPerSecond()
	if pace <= 0 {
		return 0, false
	}
	d := max(time.Duration(float64(f.rep.lacksYet)*float64(time.Second)/pace), retryPause) << x.catchUps
	if d > maxCatchUpPause<<x.catchUps || x.backingOff(f.a.ep) {
		return 0, false
	}
	if dl, ok := x.ctx.Deadline(); ok && time.Until(dl) < 2*d {
		return 0, false
	}
	return d, true
}

// catchUp asks again the endpoint whose not-yet error is set aside, its
// pause over; false when it cannot be asked (its breaker, drained since).
func (x *execution) catchUp() bool {
	f := x.fallback
	if f == nil {
		return false
	}
	ep := f.a.ep
	if !ep.answersClients() || x.backingOff(ep) {
		return false
	}
	if !x.startAgain(&attempt{ep: ep, role: roleFailover}) {
		return false
	}
	x.catchUps++
	return true
}
