package engine

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// An EVM "latest" block (eth_getBlockByNumber, eth_getHeaderByNumber) is
// its endpoint's head: a client polling it through rpcdash saw its chain
// go back 2–3 blocks whenever a read went to an endpoint a few blocks
// behind (within chain.max_head_lag, so still routable): given it by the
// router's load spreading or its exploration. A client of any one endpoint
// never sees that. A block cannot be raised, as a head number is
// (monotonicHead), so:
//
//   - such a read goes first to the endpoints at the pool head: one whose
//     known head is behind it (lagOf, every block the chain may have made
//     since its last sighting credited) ranks after them (candidate.behind)
//     and is not explored with it. It is asked when the others fail or are
//     slow (a failover, a hedge), or when it is all there is.
//   - its answers keep a floor (readfloor.go), as a Solana context.slot
//     does: a block below the highest latest block already returned, from
//     another endpoint than the one that returned it, is set aside while an
//     attempt still running or another endpoint may do better, and relayed
//     only if none does. A hedge to an endpoint behind so does not win
//     with an older block while the primary may still answer; once every
//     attempt left hangs (execution.hangs), the older block is relayed
//     (failBesideHangs), not at the request's deadline.
//
// The first keeps the second from costing anything but when an endpoint
// at the pool head is itself slow, failing, or newly behind. When the
// endpoint at the head is slow and every other candidate is behind, a
// hedge (or the race at its deadline) goes to it again first (againAtHead)
// rather than to one behind, whose older block would be held while the
// primary may answer: that hedge bought nothing. Two heavy-tail sims (5 %
// of answers 0.4–1.2 s), one 3 blocks behind, one client polling: p99
// 872–1098 ms with the hedges to the one behind (none won), as slow as the
// sim at the head alone; 165–590 ms with them to the sim at the head
// again, no older block either way.

// againAtHead starts, as role, a second attempt on an endpoint at the pool
// head already working on a read whose answers keep a floor (one that
// shows the head, a Solana read's context.slot), when the candidate
// the hedge or race would go to next is behind (candidate.behind), as
// hedge.same_domain allows "when no other domain is left" (relaunch): one
// endpoint at the head answers its slow asks' next one in its usual time,
// and the one behind answers an older block that is set aside while the
// primary may answer. Once only: a second attempt there already, the next
// goes to the one behind, whose block is relayed once every attempt at the
// head hangs (failBesideHangs). Not with hedge.same_domain false, nor, for
// a race, on an endpoint gone quiet (nothing heard for breaker.cooldown):
// a race there waits out another deadline before the one behind is asked.
// (Not hangsNow nor unanswering: the attempt the race is for has just
// passed its deadline, which marks its endpoint so until it is heard.)
func (x *execution) againAtHead(role role, hedgeDone func()) *endpoint {
	if x.p.readFloor == nil || !x.e.cfg.Hedge.SameDomain {
		return nil
	}
	noStale := len(x.live) > 0 && x.noStale()
	if i := x.pick(true, role == roleFailover, noStale); i < 0 || !x.order[i].behind {
		return nil
	}
	now := x.e.now()
	return x.relaunchWhere(role, hedgeDone, func(c candidate, n int) bool {
		return !c.behind && n == 1 && (role == roleHedge || !x.e.goneQuiet(c.ep, now))
	})
}

// showsHead says whether a read's answer is its endpoint's head that
// keeps the latest-block floor: an EVM latest block.
func (e *Engine) showsHead(req *jsonrpc.Request) bool {
	return e.cfg.Chain.Kind == "evm" && jsonrpc.ReadsLatestBlock(req.Method, req.Params)
}

// latestAt is what an EVM answer carrying head (answerHead) was read at
// for the latest-block floor: the number of a latest block; 0 for a head
// number (eth_blockNumber, raised instead).
func latestAt(method string, head int64) int64 {
	if isHeadMethod(method) {
		return 0
	}
	return head
}
