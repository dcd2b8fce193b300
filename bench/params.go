package bench

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/rpcdash/rpcdash/sim"
)

// uniqueParams are params for method that no other call of the run shares:
// the address, key, call data or hash is derived from the run's seed and
// the call's id, so nothing between bench and the node can merge or cache
// two calls. ok is false for a method bench has no template for (a method
// without params, such as eth_blockNumber, is sent with [] and every call
// of it is the same request).
func uniqueParams(method string, seed int64, id uint64) (json.RawMessage, bool) {
	salt := mix64(uint64(seed))
	addr := fmt.Sprintf("0x%016x%024x", salt, id)
	word := fmt.Sprintf("%032x%032x", salt, id)
	var p string
	switch method {
	case "eth_getBalance", "eth_getTransactionCount", "eth_getCode":
		p = fmt.Sprintf(`[%q,"latest"]`, addr)
	case "eth_getStorageAt":
		p = fmt.Sprintf(`[%q,"0x0","latest"]`, addr)
	case "eth_call":
		p = fmt.Sprintf(`[{"to":%q,"data":"0x70a08231%s"},"latest"]`, addr, word)
	case "eth_estimateGas":
		p = fmt.Sprintf(`[{"to":%q,"data":"0x70a08231%s"}]`, addr, word)
	case "eth_getTransactionReceipt", "eth_getTransactionByHash":
		p = fmt.Sprintf(`["0x%s"]`, word)
	case "eth_getLogs":
		p = fmt.Sprintf(`[{"address":%q,"fromBlock":"latest","toBlock":"latest"}]`, addr)
	case "getBalance", "getAccountInfo":
		var key [32]byte
		binary.BigEndian.PutUint64(key[8:], salt)
		binary.BigEndian.PutUint64(key[24:], id)
		key[0] = 1 // no leading zero bytes: a full-length key
		p = fmt.Sprintf(`[%q]`, sim.Base58(key[:]))
	default:
		return json.RawMessage("[]"), false
	}
	return json.RawMessage(p), true
}

// mix64 is SplitMix64's finaliser: nearby inputs give unrelated outputs.
func mix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}
