package engine

import (
	"sync/atomic"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// Solana clients read the slot and the block height at each commitment
// (getSlot, getBlockHeight) again and again: a confirmation loop, a cursor.
// One node never answers less than it already did; endpoints a slot or two
// apart would, answer by answer. The finalized getSlot is a head
// (monotonicHead); each of the others keeps its own floor by the same rule
// (keepMonotonic), bounded by the pool head moved by its commitment's lead.
// These answers are no heads: they judge no endpoint.
type solanaFloors [2][3]atomic.Int64 // getSlot, getBlockHeight × finalized, confirmed, processed

// solanaFloor is the floor of req's answers and its commitment's lead over
// the heads; nil when req keeps none.
func (e *Engine) solanaFloor(req *jsonrpc.Request) (*atomic.Int64, int64) {
	if e.cfg.Chain.Kind != "solana" {
		return nil, 0
	}
	var m int
	switch req.Method {
	case "getSlot":
		m = 0
	case "getBlockHeight":
		m = 1
	default:
		return nil, 0
	}
	var c int
	commitment := jsonrpc.Commitment(req.Params)
	switch commitment {
	case jsonrpc.Finalized:
		if m == 0 {
			return nil, 0 // a head: monotonicHead
		}
		c = 0
	case jsonrpc.Confirmed:
		c = 1
	case jsonrpc.Processed:
		c = 2
	}
	return &e.solanaFloors[m][c], leadOf(commitment)
}

// monotonicSolana keeps a getSlot or getBlockHeight answer at or above the
// ones already returned at its commitment (no-op for other reads).
func (e *Engine) monotonicSolana(req *jsonrpc.Request, res *result) {
	floor, lead := e.solanaFloor(req)
	if floor == nil || res.body == nil {
		return
	}
	if v, ok := jsonrpc.ResultUint64(res.body.Bytes()); ok && v > 0 {
		e.keepMonotonic(floor, nil, lead, req.Method, res.body, int64(v), res.ep)
	}
}
