package jsonrpc

import (
	"encoding/json"
	"strconv"
	"strings"
)

// blockParam is where EVM reads name an explicit block number.
var blockParam = map[string]int{
	"eth_getBlockByNumber":                    0,
	"eth_getHeaderByNumber":                   0,
	"eth_getBlockTransactionCountByNumber":    0,
	"eth_getTransactionByBlockNumberAndIndex": 0,
	"eth_getUncleCountByBlockNumber":          0,
	"eth_getUncleByBlockNumberAndIndex":       0,
	"eth_getBlockReceipts":                    0,
	"debug_traceBlockByNumber":                0,
	"trace_block":                             0,
	"trace_replayBlockTransactions":           0,
	"eth_getBalance":                          1,
	"eth_getCode":                             1,
	"eth_getTransactionCount":                 1,
	"eth_call":                                1,
	"eth_getStorageAt":                        2,
	"eth_getProof":                            2,
}

// logFilterReads take a log filter {fromBlock, toBlock, blockHash} as their
// first parameter. A node answers [] for a range past its head, where a
// read of one block answers null.
var logFilterReads = map[string]bool{"eth_getLogs": true, "trace_filter": true}

// RequiredHead is the block number an EVM read names explicitly (0 when it
// names a tag or nothing): an endpoint whose head is below it would answer
// "not found", null, or [] for a log filter's range. It reads the parameter
// in place, without decoding the params (eth_call's calldata can be large).
func RequiredHead(method string, params json.RawMessage) int64 {
	if logFilterReads[method] {
		return filterRequiredHead(paramAt(TrimSpace(params), 0))
	}
	i, ok := blockParam[method]
	if !ok {
		return 0
	}
	arg := paramAt(TrimSpace(params), i)
	if len(arg) > 0 && arg[0] == '{' { // EIP-1898: {"blockNumber": "0x…"}
		var num []byte
		for it := (memberIter{b: arg, i: 1}); it.next(); {
			if string(arg[it.ks:it.ke]) == `"blockNumber"` {
				num = arg[it.vs:it.ve]
			}
		}
		arg = num
	}
	return hexQuantity(arg)
}

// filterRequiredHead is the block a log filter needs the node to have: its
// toBlock when that is a number; its fromBlock when toBlock is a tip tag or
// absent ("latest", which the node resolves below fromBlock until it has
// it); none for a blockHash, which names a block by hash.
func filterRequiredHead(filter []byte) int64 {
	if len(filter) == 0 || filter[0] != '{' {
		return 0
	}
	var from, to []byte
	for it := (memberIter{b: filter, i: 1}); it.next(); {
		switch string(filter[it.ks:it.ke]) {
		case `"fromBlock"`:
			from = filter[it.vs:it.ve]
		case `"toBlock"`:
			to = filter[it.vs:it.ve]
		case `"blockHash"`:
			return 0
		}
	}
	if n := hexQuantity(to); n > 0 {
		return n
	}
	if to == nil || isTipTag(to) {
		return hexQuantity(from)
	}
	return 0
}

// hexQuantity reads a JSON string "0x…" of at most 15 hex digits (0 when it
// is anything else).
func hexQuantity(v []byte) int64 {
	if len(v) < 4 || len(v) > 2+2+15 || v[0] != '"' || v[1] != '0' || v[2] != 'x' || v[len(v)-1] != '"' {
		return 0
	}
	var n int64
	for _, c := range v[3 : len(v)-1] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return 0
		}
	}
	return n
}

// StringParam extracts params[i] when it is a string (a filter id).
func StringParam(params json.RawMessage, i int) (string, bool) {
	return decodeString(paramAt(TrimSpace(params), i))
}

// WithStringParam returns params with params[i] replaced by the JSON
// string s, everything else kept byte for byte; false when params is not
// an array with an element i.
func WithStringParam(params json.RawMessage, i int, s string) (json.RawMessage, bool) {
	p := TrimSpace(params)
	if len(p) == 0 || p[0] != '[' {
		return nil, false
	}
	k := 0
	for it := (arrayIter{b: p, i: 1}); it.next(); k++ {
		if k == i {
			out := make([]byte, 0, len(p)+len(s)+2)
			out = append(out, p[:it.vs]...)
			out = appendString(out, s)
			return append(out, p[it.ve:]...), true
		}
	}
	return nil, false
}

// AppendStringResult appends {"jsonrpc":"2.0","id":<id>,"result":"<s>"}.
func AppendStringResult(dst []byte, id json.RawMessage, s string) []byte {
	dst = appendResultHead(dst, id)
	dst = appendString(dst, s)
	return append(dst, '}')
}

// AppendBoolResult appends {"jsonrpc":"2.0","id":<id>,"result":<b>}.
func AppendBoolResult(dst []byte, id json.RawMessage, b bool) []byte {
	dst = appendResultHead(dst, id)
	dst = strconv.AppendBool(dst, b)
	return append(dst, '}')
}

func appendResultHead(dst []byte, id json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if len(id) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	return append(dst, `,"result":`...)
}

// Quantity reads a JSON string "0x…" of at most 15 hex digits (0 when it is
// anything else), as a block number in an answer is written.
func Quantity(v json.RawMessage) int64 { return hexQuantity(TrimSpace(v)) }

// ReadsLatestBlock says whether a read asks for the endpoint's latest block
// (eth_getBlockByNumber or geth's eth_getHeaderByNumber, "latest"): the
// number of the block it answers is that endpoint's head. "pending" is not
// one: a pending block is the node's guess at the next.
func ReadsLatestBlock(method string, params json.RawMessage) bool {
	return string(blockByNumberTag(method, params)) == `"latest"`
}

// ReadsTipBlock reports whether an EVM read of one block by its number
// names the latest or the pending block.
func ReadsTipBlock(method string, params json.RawMessage) bool {
	tag := string(blockByNumberTag(method, params))
	return tag == `"latest"` || tag == `"pending"`
}

// blockByNumberTag is the block an EVM read of one block by its number
// names (eth_getBlockByNumber, geth's eth_getHeaderByNumber) as written,
// a tag in its quotes or a hex number; nil for any other read.
func blockByNumberTag(method string, params json.RawMessage) []byte {
	if method != "eth_getBlockByNumber" && method != "eth_getHeaderByNumber" {
		return nil
	}
	return paramAt(TrimSpace(params), 0)
}

// FinalityTag is the tag an EVM read of a block by its finality names,
// "finalized" or "safe" (eth_getBlockByNumber, geth's eth_getHeaderByNumber),
// "" for any other read.
func FinalityTag(method string, params json.RawMessage) string {
	switch string(blockByNumberTag(method, params)) {
	case `"finalized"`:
		return "finalized"
	case `"safe"`:
		return "safe"
	}
	return ""
}

// ResultNumber is the "number" member of an object result ("0x…", at most
// 15 hex digits; a block's own number), 0 when there is none. It reads body
// in place up to that member and no further: nodes write a block's number
// before its transactions, so a large block is not scanned again. body is
// an answer InspectResponse found valid.
func ResultNumber(body []byte) int64 {
	n, _ := ResultNumberOK(body)
	return n
}

// ResultNumberOK is ResultNumber, and whether the result has a number
// that is a quantity (0x0 included).
func ResultNumberOK(body []byte) (int64, bool) {
	b, m, ok := resultMembers(body)
	if !ok {
		return 0, false
	}
	for m.next() {
		if string(b[m.ks:m.ke]) == `"number"` {
			v := b[m.vs:m.ve]
			return hexQuantity(v), string(v) == `"0x0"` || hexQuantity(v) > 0
		}
	}
	return 0, false
}

// resultMembers is an iterator over the members of body's result when it
// is an object (ok false otherwise), with the trimmed body it reads. The
// top level's members before the result are skipped, not read.
func resultMembers(body []byte) ([]byte, memberIter, bool) {
	b := TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return nil, memberIter{}, false
	}
	for it := (memberIter{b: b, i: 1}); it.nextKey(); {
		if keyOf(b[it.ks:it.ke]) != keyResult {
			if !it.skipValue() {
				return nil, memberIter{}, false
			}
			continue
		}
		if it.vs >= len(b) || b[it.vs] != '{' {
			return nil, memberIter{}, false
		}
		return b, memberIter{b: b, i: it.vs + 1}, true
	}
	return nil, memberIter{}, false
}

// ContextSlot is the context.slot of a Solana answer shaped as an
// RpcResponse ({"context":{"slot":N,…},"value":…}: getBalance,
// getAccountInfo, getLatestBlockhash, getSignatureStatuses …), the slot the
// node read it at; 0 for any other answer. It reads in place, the result's
// members up to its context (a node writes it first), not its value.
func ContextSlot(body []byte) int64 {
	b, m, ok := resultMembers(body)
	if !ok {
		return 0
	}
	for m.nextKey() {
		if string(b[m.ks:m.ke]) != `"context"` {
			if !m.skipValue() {
				return 0
			}
			continue
		}
		if m.vs >= len(b) || b[m.vs] != '{' {
			return 0
		}
		for c := (memberIter{b: b, i: m.vs + 1}); c.next(); {
			if string(b[c.ks:c.ke]) == `"slot"` {
				return decimalQuantity(b[c.vs:c.ve])
			}
		}
		return 0
	}
	return 0
}

// ReadSlot is the slot a Solana answer was read at: its context.slot
// (ContextSlot), or a getEpochInfo's absoluteSlot, the slot of the bank at
// the commitment asked, which carries no context; 0 for any other answer.
func ReadSlot(method string, body []byte) int64 {
	if method != "getEpochInfo" {
		return ContextSlot(body)
	}
	b, m, ok := resultMembers(body)
	if !ok {
		return 0
	}
	for m.nextKey() {
		if string(b[m.ks:m.ke]) == `"absoluteSlot"` {
			if !m.skipValue() {
				return 0
			}
			return decimalQuantity(b[m.vs:m.ve])
		}
		if !m.skipValue() {
			return 0
		}
	}
	return 0
}

// decimalQuantity is a JSON number that is a non-negative integer below
// 2^63 (a Solana slot), 0 for anything else.
func decimalQuantity(v []byte) int64 {
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 || len(v) > 1 && v[0] == '0' {
		return 0
	}
	return n
}

// LogsTopBlock is the highest block number an eth_getLogs filter names
// (its toBlock, or its fromBlock when that is higher or toBlock is a tag);
// 0 when it names none (tags, a blockHash).
func LogsTopBlock(params json.RawMessage) int64 {
	arg := paramAt(TrimSpace(params), 0)
	if len(arg) == 0 || arg[0] != '{' {
		return 0
	}
	var top int64
	for it := (memberIter{b: arg, i: 1}); it.next(); {
		if k := string(arg[it.ks:it.ke]); k == `"toBlock"` || k == `"fromBlock"` {
			top = max(top, hexQuantity(arg[it.vs:it.ve]))
		}
	}
	return top
}

// LogsFromBeyondTag says whether msg, an eth_getLogs error, is geth's
// "invalid block range params" for a numeric fromBlock and a toBlock that is
// a tag or absent: the tag resolved below fromBlock on this node, so the
// range is malformed only because the node has not reached fromBlock (an
// indexer polling from its last block + 1 to "latest"). It is then a
// block the node does not have (yet), judged by fromBlock, not the
// request's fault; with both ends numbers it is the request's.
func LogsFromBeyondTag(method string, params json.RawMessage, msg string) bool {
	if method != "eth_getLogs" || !strings.Contains(strings.ToLower(msg), "invalid block range") {
		return false
	}
	arg := paramAt(TrimSpace(params), 0)
	if len(arg) == 0 || arg[0] != '{' {
		return false
	}
	var from int64
	for it := (memberIter{b: arg, i: 1}); it.next(); {
		v := arg[it.vs:it.ve]
		switch string(arg[it.ks:it.ke]) {
		case `"fromBlock"`:
			from = hexQuantity(v)
		case `"toBlock"`:
			if !isTipTag(v) {
				return false
			}
		}
	}
	return from > 0
}

// isTipTag: a block tag that moves with the node's head ("latest", "safe",
// "finalized", "pending") or null.
func isTipTag(v []byte) bool {
	switch string(TrimSpace(v)) {
	case `"latest"`, `"safe"`, `"finalized"`, `"pending"`, `null`:
		return true
	}
	return false
}

// solanaSlotParam are the Solana reads whose first parameter is a slot.
var solanaSlotParam = map[string]bool{"getBlock": true, "getBlockTime": true, "getBlockCommitment": true}

// NamedBlock is the highest block (EVM) or slot (Solana) a read names, 0
// when it names none: the block of an EVM read by number (RequiredHead),
// the top of an eth_getLogs range, a Solana block's slot or the
// minContextSlot of a Solana read's config. It decodes the params: it is
// read only on an error answer.
func NamedBlock(solana bool, method string, params json.RawMessage) int64 {
	if !solana {
		if method == "eth_getLogs" {
			return LogsTopBlock(params)
		}
		return RequiredHead(method, params)
	}
	var args []json.RawMessage
	if json.Unmarshal(params, &args) != nil {
		return 0
	}
	var slot int64
	if len(args) > 0 && solanaSlotParam[method] {
		json.Unmarshal(args[0], &slot)
	}
	if len(args) > 0 {
		slot = max(slot, minContextSlot(args[len(args)-1]))
	}
	return max(slot, 0)
}

// MinContextSlot is the minContextSlot of a Solana read's config (its last
// parameter), 0 when it names none. It decodes the params: it is read only
// on an error answer.
func MinContextSlot(params json.RawMessage) int64 {
	var args []json.RawMessage
	if json.Unmarshal(params, &args) != nil || len(args) == 0 {
		return 0
	}
	return minContextSlot(args[len(args)-1])
}

func minContextSlot(cfg json.RawMessage) int64 {
	var c struct {
		MinContextSlot int64 `json:"minContextSlot"`
	}
	if json.Unmarshal(cfg, &c) != nil {
		return 0
	}
	return max(c.MinContextSlot, 0)
}
