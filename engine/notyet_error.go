package engine

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// A node asked for a block it does not have answers an error rather than
// null: geth's "header not found", "unknown block", "block range extends
// beyond current head block"; Solana's -32004, -32014, -32016
// (jsonrpc.BlameNotYet). Whose error that is depends on the block the read
// names, judged as a null answer to it is (setAside):
//   - beyond the pool head carried at the pace (blockExpected), the block
//     after it aside, the block exists nowhere yet: the error is the
//     request's, relayed from the first endpoint as a direct client gets
//     it, counted against no endpoint.
//   - the block right after it (blockMaybeMade) may exist somewhere: the
//     error is set aside while one more endpoint is asked (an indexer
//     polling that block costs two upstream requests per poll, not one
//     per endpoint). A read judged with a slack (below) has its allowance
//     for a head seen late in the slack.
//   - a block the pool has, above the endpoint's last known head or within
//     chain.max_head_lag of the pool head: the endpoint is behind (a
//     provider's backend a block late), not broken. The error is set aside
//     while another endpoint is asked, as a null is, and relayed only if
//     none does better.
//   - an older block the endpoint's head says it has, or a read naming no
//     block: the endpoint's fault (pruned, broken), as any endpoint error.
// A Solana read at confirmed or processed names a slot of that commitment,
// about 32 slots ahead of the finalized heads: it is judged moved back by
// that lead (solana_commitment.go). And a minContextSlot is a slot the
// client read in an answer's context.slot: it exists, though the pool head
// (probed every few seconds, carried at the pace rounded down) may trail it
// by a slot or two. Either is nowhere yet only beyond chain.max_head_lag
// above the pool head.

// placeNotYet settles a not-yet error answer of ep to req by those rules.
func (e *Engine) placeNotYet(ep *endpoint, req *jsonrpc.Request, r *upstreamReply) {
	n := jsonrpc.NamedBlock(e.cfg.Chain.Kind == "solana", req.Method, req.Params)
	if n <= 0 {
		return
	}
	expected := e.expectedHead(e.now().UnixNano())
	var slack int64
	if e.cfg.Chain.Kind == "solana" {
		lead := e.commitmentLead(req)
		if lead > 0 || jsonrpc.MinContextSlot(req.Params) >= n {
			slack = e.cfg.Chain.MaxHeadLag
		}
		n -= lead // in finalized slots, as the heads are
	}
	head := ep.head.Load()
	switch {
	case expected > 0 && slack == 0 && n == expected+1:
		r.out, r.cause, r.nextBlock = outAnswer, "", true
	case expected > 0 && n > expected+slack:
		r.out, r.cause = outAnswer, ""
	case head < n || expected-n <= e.cfg.Chain.MaxHeadLag:
		r.out, r.cause, r.behind = outAnswer, "", true
		if head < n || head < e.heads.top.Load() {
			// What it lacks from its head carried to now: a head probed a
			// second ago is 2-3 Solana slots old.
			r.lacksYet = max(n-e.carriedHead(ep, e.now().UnixNano()), 1)
		}
	}
}
