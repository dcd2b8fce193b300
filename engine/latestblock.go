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
// at the pool head is itself slow, failing, or newly behind.

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
