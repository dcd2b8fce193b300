package engine

// Head answers: reading, rewriting and keeping them monotonic for clients.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

func trimHex(s string) string {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:]
	}
	return s
}

// answerHead is the endpoint's head an answer shows, 0 if none: a head
// method's result (eth_blockNumber, getSlot), or the number of the
// endpoint's latest block (jsonrpc.ReadsLatestBlock), read in place
// without reading the rest of the block.
//
// A getSlot at another commitment than the probes' (finalized, a node's
// default) is no head: a confirmed or processed slot runs about 32 slots
// ahead, and taking it for one would flag its endpoint ahead of the pool or
// the others behind it, and set aside every finalized answer after it.
func answerHead(req *jsonrpc.Request, body []byte) int64 {
	if req.Method == "getSlot" && !jsonrpc.AtFinalized(req.Method, req.Params) {
		return 0
	}
	if v, ok := headOf(req.Method, body); ok {
		return v
	}
	if jsonrpc.ReadsTipBlock(req.Method, req.Params) {
		return jsonrpc.ResultNumber(body)
	}
	return 0
}

// isHeadMethod says whether a method's whole result is a head (headOf).
func isHeadMethod(method string) bool { return method == "eth_blockNumber" || method == "getSlot" }

// freezeHead makes a stale-faulted endpoint's head answers stop advancing:
// the first head it reports after the fault is the one it keeps reporting.
func (e *Engine) freezeHead(ep *endpoint, method string, r *upstreamReply) {
	if r.head <= 0 || !isHeadMethod(method) {
		return // a block cannot be rewritten; observeHead freezes its head
	}
	ep.staleHead.CompareAndSwap(0, r.head)
	if frozen := ep.staleHead.Load(); frozen < r.head {
		replaceHeadResult(r.body, method, frozen)
		r.info = jsonrpc.InspectResponse(r.body.Bytes())
		r.head = frozen
	}
}

// headOf reads the head an eth_blockNumber or getSlot answer carries.
func headOf(method string, body []byte) (int64, bool) {
	switch method {
	case "eth_blockNumber":
		s, ok := jsonrpc.ResultString(body)
		if !ok {
			return 0, false
		}
		v, err := strconv.ParseInt(trimHex(s), 16, 64)
		return v, err == nil
	case "getSlot":
		v, ok := jsonrpc.ResultUint64(body)
		return int64(v), ok
	}
	return 0, false
}

// unreadableHead says why an answer a client reads as the chain's head
// does not carry one that is a block number: a head method's result ("0x",
// a JSON number, null), or the latest or pending block's number; "" when
// it does, or is no such answer. Relayed as they came, clients read them
// as the head.
func unreadableHead(req *jsonrpc.Request, body []byte, info jsonrpc.ResponseInfo) string {
	if info.HasError {
		return ""
	}
	if isHeadMethod(req.Method) {
		if _, ok := headOf(req.Method, body); !ok {
			return req.Method + " answered a result that is not a block number"
		}
		return ""
	}
	if !info.ResultNull && jsonrpc.ReadsTipBlock(req.Method, req.Params) {
		if _, ok := jsonrpc.ResultNumberOK(body); !ok {
			return req.Method + " answered a block whose number is not a block number"
		}
	}
	return ""
}

// carriesGenesis says whether an answer gives the chain's head as block
// 0: an eth_blockNumber of 0x0, the latest or pending block numbered 0x0.
func carriesGenesis(req *jsonrpc.Request, body []byte) bool {
	if v, ok := headOf(req.Method, body); ok {
		return v == 0
	}
	if jsonrpc.ReadsTipBlock(req.Method, req.Params) {
		n, ok := jsonrpc.ResultNumberOK(body)
		return ok && n == 0
	}
	return false
}

// genesisAnswer says whether ep's answer gives head 0 while the pool's
// head is past chain.max_head_lag: a node restarted onto nothing or
// resyncing from genesis (geth in snap sync answers so). 0 is "no head"
// everywhere else, so such an answer passed every head check and was
// relayed, and the endpoint's last head was carried on at lag 0. Now its
// head is at genesis (observeGenesis) and the answer is set aside while
// another endpoint is asked (upstreamReply.behind).
func (e *Engine) genesisAnswer(ep *endpoint, req *jsonrpc.Request, body []byte) bool {
	if e.heads.top.Load() <= e.cfg.Chain.MaxHeadLag || !carriesGenesis(req, body) {
		return false
	}
	e.observeGenesis(ep)
	return true
}

// replaceHeadResult rewrites a head answer (or a Solana block height) in
// place to carry v, keeping its id.
func replaceHeadResult(body *bytes.Buffer, method string, v int64) {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body.Bytes(), &msg) != nil {
		return
	}
	var res []byte
	if method == "eth_blockNumber" {
		res = strconv.AppendQuote(nil, "0x"+strconv.FormatInt(v, 16))
	} else {
		res = strconv.AppendInt(nil, v, 10) // Solana's slots and block heights
	}
	body.Reset()
	body.WriteString(`{"jsonrpc":"2.0","id":`)
	if msg.ID == nil {
		body.WriteString("null")
	}
	body.Write(msg.ID)
	body.WriteString(`,"result":`)
	body.Write(res)
	body.WriteString("}")
}

// behindPool says whether head v, just seen, is behind the pool head by
// more than chain.max_head_lag: below the pool head, and by more than the
// lag below it carried forward at the pace (expectedHead). A head at or
// above the pool head is never behind: nothing better is known, even while
// the whole chain stands still.
func (e *Engine) behindPool(v int64) bool {
	top := e.heads.top.Load()
	return v < top && e.expectedHead(e.now().UnixNano())-v > e.cfg.Chain.MaxHeadLag
}

// monotonicHead keeps the chain from going backwards for clients: a head
// answer below one rpcdash already returned (another endpoint a block or
// two behind) is raised to it. An answer further behind than
// chain.max_head_lag is not papered over; it passes as it came.
//
// The floor is only ever a credible head. An answer from an endpoint
// flagged ahead (returned only when no other endpoint could answer) passes
// as it came and does not raise it; a floor beyond what the pool head now
// allows (set before its endpoint was found out: at start, or by an
// endpoint since excluded) is dropped to this answer. A client that was
// handed the bogus head then sees the chain's real head, lower: pinning it
// to a number no healthy endpoint will reach for years would hide every
// new block from it, and a client of that endpoint alone would see the
// same drop when it is fixed.
//
// Nor does the floor outlive the chain it came from: when the pool head
// itself stays below it for rollbackAfter, held by an endpoint that went
// back to it (a dev chain rolled back by debug_setHead or evm_revert: its
// node's own head went back), it follows the chain down. An endpoint that
// never went back, only stayed a block or two behind the one that set the
// floor (left alone when that one is drained or failing), is no witness:
// its own clients never saw the chain go back, and it catches up.
func (e *Engine) monotonicHead(method string, body *bytes.Buffer, v int64, from *endpoint) {
	e.keepMonotonic(&e.servedHead, &e.servedHeadAbove, 0, method, body, v, from)
}

// rollbackAfter is how long the pool head may stay below the served floor
// before the floor follows it: four blocks at the chain's pace, at least 5 s.
func (e *Engine) rollbackAfter() time.Duration {
	d := 5 * time.Second
	if bps := e.heads.blocksPerSecond(); bps > 0 {
		d = max(d, time.Duration(4/bps*float64(time.Second)))
	}
	return d
}

// floorAbovePool says whether floor value served has stood above the pool
// head for rollbackAfter, the pool head held all that time by an endpoint
// that went back to it (topFellAt), keeping since (0: it does not stand
// above it so).
func (e *Engine) floorAbovePool(served int64, since *atomic.Int64) bool {
	fellAt := e.heads.topFellAt.Load()
	if top := e.heads.top.Load(); top == 0 || top >= served || fellAt == 0 {
		since.Store(0)
		return false
	}
	now := e.now().UnixNano()
	if since.CompareAndSwap(0, now) {
		return false
	}
	return now-max(since.Load(), fellAt) >= int64(e.rollbackAfter())
}

// keepMonotonic is monotonicHead's rule for the answers kept at or above
// floor, whose values run lead ahead of the heads (a Solana slot or block
// height at a commitment ahead of finalized; a block height is below its
// slot, so the slots' bound holds for it too).
func (e *Engine) keepMonotonic(floor, abovePool *atomic.Int64, lead int64, method string, body *bytes.Buffer, v int64, from *endpoint) {
	if from != nil && from.ahead.Load() {
		return
	}
	for {
		served := floor.Load()
		if v >= served {
			if floor.CompareAndSwap(served, v) {
				if abovePool != nil {
					abovePool.Store(0)
				}
				return
			}
			continue
		}
		if abovePool != nil && e.floorAbovePool(served, abovePool) {
			if floor.CompareAndSwap(served, v) {
				abovePool.Store(0)
				return
			}
			continue
		}
		if served > e.floorBound(lead) {
			if floor.CompareAndSwap(served, v) {
				return
			}
			continue
		}
		if served-v <= e.cfg.Chain.MaxHeadLag {
			replaceHeadResult(body, method, served)
		}
		return
	}
}
