package engine

import (
	"strings"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A Solana node checks a transaction's recent blockhash before it sends it
// (preflight): one from a bank it has not reached yet fails with -32002
// "Transaction simulation failed: Blockhash not found", and the transaction
// goes nowhere. Clients take the blockhash from getLatestBlockhash, which
// rpcdash may have answered from an endpoint a few slots ahead of the one
// the send goes to: a client of that endpoint alone never sees the failure.
// From an endpoint whose head is below the pool head, so that another may
// have the blockhash, the failure is set aside while the next endpoint
// takes the transaction, and relayed if none does better. It is safe for a
// write: the node that failed preflight sent nothing. From an endpoint at
// the pool head it is the transaction's (an expired blockhash), relayed as
// it came, one send per transaction.

// preflightMissedBlockhash says whether r, an answer of ep to req, is such
// a failure from an endpoint behind.
func (e *Engine) preflightMissedBlockhash(ep *endpoint, req *jsonrpc.Request, r *upstreamReply) bool {
	return e.cfg.Chain.Kind == "solana" && req.Method == "sendTransaction" &&
		r.out == outAnswer && r.info.HasError && r.info.ErrCode == codePreflightFailure &&
		strings.Contains(strings.ToLower(r.info.ErrMessage), "blockhash not found") &&
		ep.head.Load() < e.heads.top.Load()
}

// codePreflightFailure is Solana's -32002, a transaction's preflight
// (simulation) failure.
const codePreflightFailure = -32002
