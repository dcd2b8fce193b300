package engine

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// An EVM node answers eth_getTransactionReceipt with null for a
// transaction mined in a block it has not reached. A client polling a
// receipt through rpcdash, its polls spread over endpoints a few blocks
// apart, got the receipt, then null; a client of any one node never sees a
// mined transaction's receipt vanish (short of a reorg). So, from an
// endpoint whose head is below the pool head, a null receipt is set aside
// while the next endpoint is asked, and relayed if none does better (a
// transaction not mined yet has no receipt anywhere). From an endpoint at
// the pool head it is relayed as it came, one request per poll. Receipts
// of transactions sent through rpcdash go first to the endpoint that took
// them (write affinity); this covers the others. Behind is a proven lag
// (provenBehind).

// missedReceipt says whether r, an answer of ep to req, is such an answer
// from an endpoint behind.
func (e *Engine) missedReceipt(ep *endpoint, req *jsonrpc.Request, r *upstreamReply) bool {
	return e.cfg.Chain.Kind == "evm" && req.Method == "eth_getTransactionReceipt" && r.out == outAnswer &&
		!r.info.HasError && r.info.ResultNull && e.provenBehind(ep)
}
