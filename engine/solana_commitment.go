package engine

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// Solana heads are finalized slots (the probes' getSlot, a node's default
// commitment), but a read may ask at confirmed or processed, which run
// ahead of finalized: a slot is finalized once 32 slots are confirmed on
// top of it. A slot such a read names (its minContextSlot, a confirmed
// block's slot) is measured against the heads moved by that lead; the
// lead varies with the network (finalization falls further behind in a
// slow stretch), so the check of whether the slot exists at all allows
// chain.max_head_lag on top of it.
const solanaCommitmentLead = 32

// commitmentLead is how far ahead of the heads the slots of req's
// commitment run: solanaCommitmentLead for a Solana read at confirmed or
// processed, 0 otherwise.
func (e *Engine) commitmentLead(req *jsonrpc.Request) int64 {
	if e.cfg.Chain.Kind != "solana" {
		return 0
	}
	return leadOf(jsonrpc.Commitment(req.Params))
}

// leadOf is how far ahead of the heads the slots of a Solana commitment run.
func leadOf(commitment string) int64 {
	if commitment == jsonrpc.Finalized {
		return 0
	}
	return solanaCommitmentLead
}
