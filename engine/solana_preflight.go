package engine

import (
	"encoding/json"
	"strings"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A Solana node checks a transaction's recent blockhash against its bank:
// one from a bank it has not reached yet fails sendTransaction's preflight
// with -32002 "Transaction simulation failed: Blockhash not found" (and the
// transaction goes nowhere), simulateTransaction with err
// "BlockhashNotFound", and isBlockhashValid answers false. Clients take the
// blockhash from getLatestBlockhash, which rpcdash may have answered from
// an endpoint a few slots ahead of the one asked next: a client of that
// endpoint alone never sees these. From an endpoint whose head is below the
// pool head, so that another may have the blockhash, such an answer is set
// aside while the next endpoint is asked, and relayed if none does better.
// It is safe for a write: the node that failed preflight sent nothing. From
// an endpoint at the pool head it is the blockhash's (expired, or never
// made), relayed as it came, one request each. Behind, for the reads, is a
// proven lag (provenBehind); for sendTransaction, whose failure is a
// write's, a last seen head below the pool's.

// missedBlockhash says whether r, an answer of ep to req, is such an answer
// from an endpoint behind.
func (e *Engine) missedBlockhash(ep *endpoint, req *jsonrpc.Request, r *upstreamReply) bool {
	if e.cfg.Chain.Kind != "solana" || r.out != outAnswer {
		return false
	}
	switch req.Method {
	case "sendTransaction":
		return ep.head.Load() < e.heads.top.Load() && r.info.HasError && r.info.ErrCode == codePreflightFailure &&
			strings.Contains(strings.ToLower(r.info.ErrMessage), "blockhash not found")
	case "isBlockhashValid":
		var a struct {
			Result struct{ Value *bool }
		}
		return !r.info.HasError && e.provenBehind(ep) && json.Unmarshal(r.body.Bytes(), &a) == nil && a.Result.Value != nil && !*a.Result.Value
	case "simulateTransaction":
		var a struct {
			Result struct{ Value struct{ Err json.RawMessage } }
		}
		return !r.info.HasError && e.provenBehind(ep) && json.Unmarshal(r.body.Bytes(), &a) == nil && string(a.Result.Value.Err) == `"BlockhashNotFound"`
	}
	return false
}

// codePreflightFailure is Solana's -32002, a transaction's preflight
// (simulation) failure.
const codePreflightFailure = -32002

// A Solana node behind the cluster (or not knowing how far behind it is)
// refuses a transaction with -32005 before it sends it: agave's preflight
// health check comes first. A write so refused may go to the next endpoint
// like one whose connection never carried it.

// unsentRefusal says whether r, an answer to req, is such a refusal.
func (e *Engine) unsentRefusal(req *jsonrpc.Request, r *upstreamReply) bool {
	return e.cfg.Chain.Kind == "solana" && req.Method == "sendTransaction" &&
		r.out == outEndpointError && r.info.HasError && r.info.ErrCode == codeNodeUnhealthy
}

// codeNodeUnhealthy is Solana's -32005, "Node is unhealthy" or "Node is
// behind by N slots".
const codeNodeUnhealthy = -32005
