package engine

import (
	"math"
	"sync"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// Solana reads are answered {"context":{"slot":N},"value":…} (getBalance,
// getAccountInfo, getLatestBlockhash, getSignatureStatuses …): N is the
// slot the node read the value at, and one node never reads at a slot
// below one it read at before. Endpoints a slot or a few apart, within
// chain.max_head_lag, would, answer by answer: a wallet polling getBalance
// through rpcdash was handed, now and then, the balance of a slot or three
// back after the current one, by an endpoint behind for the moment
// (explored, or hedged to). So an answer whose context.slot is below the
// highest already returned at its commitment, from another endpoint than
// the one that returned it, is set aside while another endpoint is asked,
// and relayed only if none does better (setAside); the slot cannot be
// raised as a head answer's is: the value is that slot's. The endpoint that
// returned the highest is relayed as it came: its answers crossing a slot's
// edge side by side, which its own clients see too. Which endpoint is
// behind is not asked of the probes: Solana nodes drift a slot or three
// apart and back within a probe interval, and judged by the heads the
// probes saw, an endpoint stalled for a slot or two since was taken as
// current and its answers relayed.
//
// The floor is only a credible slot, as the others are: an endpoint
// flagged ahead does not move it, one beyond the pool head's bound (plus
// the commitment's lead) holds nothing back, and a lower slot relayed
// because no endpoint did better becomes the floor, so that later reads
// do not pay for asking every endpoint.
type contextFloors [3]contextFloor // finalized, confirmed, processed

// contextFloor is the highest context.slot returned at a commitment, and
// the endpoint that returned it.
type contextFloor struct {
	mu   sync.Mutex
	slot int64
	by   *endpoint
}

func (f *contextFloors) of(commitment string) *contextFloor {
	switch commitment {
	case jsonrpc.Confirmed:
		return &f[1]
	case jsonrpc.Processed:
		return &f[2]
	}
	return &f[0]
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

// contextWentBack says whether slot, the context.slot of ep's answer to a
// read at commitment, is below a credible one another endpoint returned
// at that commitment.
func (e *Engine) contextWentBack(commitment string, ep *endpoint, slot int64) bool {
	if commitment == "" || slot <= 0 {
		return false
	}
	f := e.contextFloors.of(commitment)
	f.mu.Lock()
	defer f.mu.Unlock()
	return e.wentBelow(commitment, f, ep, slot)
}

// wentBelow is contextWentBack with f held.
func (e *Engine) wentBelow(commitment string, f *contextFloor, ep *endpoint, slot int64) bool {
	return slot < f.slot && ep != f.by && e.contextCredible(commitment, f.slot)
}

// contextCredible says whether a context.slot floor at commitment is within
// what the pool head allows.
func (e *Engine) contextCredible(commitment string, floor int64) bool {
	lead := leadOf(commitment)
	bound := e.headBound(e.now().UnixNano())
	return bound >= math.MaxInt64-lead || floor <= bound+lead
}

// noteContextSlot moves commitment's floor to slot, the context.slot
// relayed from ep: up as the chain goes on, down when slot went back and
// was relayed because no endpoint asked did better, or the floor is no
// longer credible; not for the endpoint that holds the floor answering
// below it.
func (e *Engine) noteContextSlot(commitment string, slot int64, ep *endpoint) {
	if commitment == "" || slot <= 0 || ep == nil || ep.ahead.Load() {
		return
	}
	f := e.contextFloors.of(commitment)
	f.mu.Lock()
	defer f.mu.Unlock()
	if slot > f.slot || e.wentBelow(commitment, f, ep, slot) || slot < f.slot && !e.contextCredible(commitment, f.slot) {
		f.slot, f.by = slot, ep
	}
}
