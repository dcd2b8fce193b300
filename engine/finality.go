package engine

import "sync/atomic"

// A finalized block never goes back on one node, nor, short of a deep
// reorg, does the safe one: a bridge, or an L2 node reading its L1 through
// rpcdash (op-node polls "finalized" and "safe"), takes a lower one for a
// reorg of what was final. Endpoints a finality update apart would hand one
// out, answer by answer. So a read of the finalized or safe block answered
// with a lower block than one already returned is set aside while another
// endpoint is asked, and relayed only if none does better (setAside), or
// once every attempt left hangs (failBesideHangs), not at the request's
// deadline; the highest returned is the floor. A block cannot be
// rewritten, as a head answer is: it is asked for elsewhere.
//
// The floor is only a credible number: an answer from an endpoint flagged
// ahead does not move it, a floor beyond the pool head (set before its
// endpoint was found out) holds nothing back, and a lower block relayed
// because no endpoint did better becomes the floor.
type finalityFloors struct{ finalized, safe atomic.Int64 }

func (f *finalityFloors) of(tag string) *atomic.Int64 {
	if tag == "safe" {
		return &f.safe
	}
	return &f.finalized
}

// finalityWentBack says whether n, the block a read of tag was answered
// with, is below one already returned.
func (e *Engine) finalityWentBack(tag string, n int64) bool {
	floor := e.finality.of(tag).Load()
	return n > 0 && n < floor && floor <= e.expectedHead(e.now().UnixNano())
}

// noteFinality moves tag's floor to n, the block relayed from ep: up as
// blocks are finalized, and down when a lower one was relayed because no
// endpoint asked did better (a reorg of the safe block, or a floor no
// endpoint reaches), so that later reads do not pay for asking them all.
func (e *Engine) noteFinality(tag string, n int64, ep *endpoint) {
	if ep != nil && ep.ahead.Load() {
		return
	}
	floor := e.finality.of(tag)
	for {
		f := floor.Load()
		if n == f || floor.CompareAndSwap(f, n) {
			return
		}
	}
}
