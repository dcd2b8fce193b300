package engine

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// Solana reads are answered {"context":{"slot":N},"value":…} (getBalance,
// getAccountInfo, getLatestBlockhash, getSignatureStatuses …): N is the
// slot the node read the value at. A wallet polling getBalance through
// rpcdash was handed, now and then, the balance of a slot or three back
// after the current one, by an endpoint behind for the moment (explored,
// or hedged to). Each commitment keeps its floor of context.slot
// (readfloor.go).
type contextFloors [3]readFloor // finalized, confirmed, processed

// of is the floor of a commitment's context.slot and how far its slots
// run ahead of the heads.
func (f *contextFloors) of(commitment string) (*readFloor, int64) {
	switch commitment {
	case jsonrpc.Confirmed:
		return &f[1], leadOf(commitment)
	case jsonrpc.Processed:
		return &f[2], leadOf(commitment)
	}
	return &f[0], 0
}

// contextCommitment is the commitment a Solana read's context.slot is at,
// whose floor its answers keep: the one it names (finalized, a node's
// default, when none), processed for getSignatureStatuses, which takes
// none and reads the node's processed bank.
func contextCommitment(req *jsonrpc.Request) string {
	if req.Method == "getSignatureStatuses" {
		return jsonrpc.Processed
	}
	return jsonrpc.Commitment(req.Params)
}
