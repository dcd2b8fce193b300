package engine

import (
	"encoding/json"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A Solana node answers getSignatureStatuses with null for a signature it
// has not seen land: one that landed in a slot it has not reached yet. A
// client polling the statuses of a transaction through rpcdash, its polls
// spread over endpoints a few slots apart, saw it processed or confirmed,
// then null, then confirmed again; a client of any one node never sees a
// landed transaction vanish. So, from an endpoint whose head is below the
// pool head, an answer with a null status is set aside while the next
// endpoint is asked, and relayed if none does better (a signature no
// endpoint has seen is null everywhere). From an endpoint at the pool head
// it is relayed as it came, one request each. Behind is a proven lag
// (provenBehind).

// missedSignature says whether r, an answer of ep to req, is such an
// answer from an endpoint behind.
func (e *Engine) missedSignature(ep *endpoint, req *jsonrpc.Request, r *upstreamReply) bool {
	if e.cfg.Chain.Kind != "solana" || req.Method != "getSignatureStatuses" || r.out != outAnswer ||
		r.info.HasError || r.body == nil || !e.provenBehind(ep) {
		return false
	}
	var a struct {
		Result struct{ Value []json.RawMessage }
	}
	if json.Unmarshal(r.body.Bytes(), &a) != nil {
		return false
	}
	for _, v := range a.Result.Value {
		if string(v) == "null" {
			return true
		}
	}
	return false
}
