package jsonrpc

import "encoding/json"

// MovingBlock says whether a read's answer depends on a block that moves
// with the chain: a block tag of latest, pending, safe or finalized, or no
// block parameter for a method that then reads the latest (eth_blockNumber,
// eth_gasPrice, eth_getBalance without a tag; methods outside the tables
// count as moving). Two endpoints may answer such a read differently near
// the tip and both be right. A block number, a block hash or "earliest"
// names one block; methods that read no block (eth_chainId) never move.
// TipDependent differs: it also counts an explicit block number (an endpoint
// may not have it yet).
func (t *MethodTable) MovingBlock(method string, params json.RawMessage) bool {
	return t.followsChain(method, params, movingTag, false)
}

// movingTag: an absent block parameter or a moving tag.
func movingTag(v []byte) bool {
	if len(v) == 0 || string(v) == "null" {
		return true
	}
	switch v[0] {
	case '"':
		s, _ := decodeString(v)
		switch s {
		case "", "latest", "pending", "safe", "finalized":
			return true
		}
		return false
	case '{':
		return objectBlock(v, `"blockNumber"`, movingTag)
	}
	return false
}
