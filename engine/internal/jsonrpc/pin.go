package jsonrpc

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Finality pinning (chain.pin): a read that accepts a block tag or a
// commitment and names none gets the pinned level, so that every endpoint
// answers about the same block whatever its distance from the tip. Mixing
// levels across endpoints ("latest" here, "finalized" there) answers one
// logical query about different blocks.

// evmPinnable are the EVM reads whose block tag is optional (the rest of
// blockParam require one); the tag's position is in blockParam.
var evmPinnable = []string{"eth_getBalance", "eth_getCode", "eth_getTransactionCount", "eth_call", "eth_getStorageAt", "eth_getProof"}

// solanaPinned lists Solana methods whose last parameter is a config object
// taking "commitment", with the number of positional parameters before it.
var solanaPinned = map[string]int{
	"getAccountInfo":                    1,
	"getBalance":                        1,
	"getBlock":                          1, // takes finalized or confirmed, the two pin levels
	"getBlockHeight":                    0,
	"getEpochInfo":                      0,
	"getLatestBlockhash":                0,
	"getMultipleAccounts":               1,
	"getProgramAccounts":                1,
	"getSlot":                           0,
	"getTokenAccountBalance":            1,
	"getTokenAccountsByOwner":           2,
	"getTokenSupply":                    1,
	"getTransaction":                    1,
	"getSignaturesForAddress":           1,
	"getMinimumBalanceForRentExemption": 1,
	"getFeeForMessage":                  1,
	// The checks of a blockhash read at the pinned level: a node checks it
	// against its bank at their commitment, finalized by default, which
	// does not hold a confirmed blockhash yet.
	"isBlockhashValid":    1,
	"simulateTransaction": 1,
}

// solanaPreflightPinned lists the Solana writes whose config object takes
// "preflightCommitment", the bank their preflight checks the transaction's
// blockhash against (finalized by default), with the number of positional
// parameters before it: a blockhash read at a pinned confirmed fails a
// finalized preflight with "Blockhash not found".
var solanaPreflightPinned = map[string]int{"sendTransaction": 1}

// PinsWrite says whether chain.pin fills in a level in method, a write.
func PinsWrite(kind, method string) bool {
	_, ok := solanaPreflightPinned[method]
	return kind == "solana" && ok
}

// PinParams returns params with the pinned level added where the request
// named none, and whether it changed anything.
func PinParams(kind, pin, method string, params json.RawMessage) (json.RawMessage, bool) {
	if pin == "" {
		return nil, false
	}
	var arr []json.RawMessage
	if len(params) > 0 && json.Unmarshal(params, &arr) != nil {
		return nil, false // by-name params: leave them alone
	}
	if kind == "solana" {
		key := "commitment"
		n, ok := solanaPinned[method]
		if !ok {
			key = "preflightCommitment"
			n, ok = solanaPreflightPinned[method]
		}
		if !ok || len(arr) < n || len(arr) > n+1 {
			return nil, false
		}
		cfg := map[string]json.RawMessage{}
		if len(arr) == n+1 {
			if string(arr[n]) != "null" && json.Unmarshal(arr[n], &cfg) != nil {
				return nil, false
			}
			if _, named := cfg[key]; named {
				return nil, false
			}
		}
		cfg[key] = json.RawMessage(strconv.Quote(pin))
		b, _ := json.Marshal(cfg)
		arr = append(arr[:n], b)
	} else {
		i, ok := blockParam[method]
		if !ok || !slices.Contains(evmPinnable, method) || len(arr) < i || len(arr) > i+1 {
			return nil, false
		}
		if len(arr) == i+1 && string(arr[i]) != "null" {
			return nil, false
		}
		arr = append(arr[:i], json.RawMessage(strconv.Quote(pin)))
	}
	out, err := json.Marshal(arr)
	if err != nil {
		return nil, false
	}
	return out, true
}

// AtFinalized says whether a Solana read of solanaPinned asks at the
// finalized commitment: it names none (a node's default is finalized) or
// names finalized (or its old names, max and root). Confirmed and processed
// answers run about 32 slots ahead of it. It scans the params in place.
func AtFinalized(method string, params json.RawMessage) bool {
	n, ok := solanaPinned[method]
	if !ok {
		return false
	}
	p := TrimSpace(params)
	if len(p) == 0 {
		return true
	}
	if p[0] != '[' {
		return false // by-name params
	}
	cfg := paramAt(p, n)
	if len(cfg) == 0 || string(cfg) == "null" {
		return true
	}
	if cfg[0] != '{' {
		return false
	}
	for it := (memberIter{b: cfg, i: 1}); it.next(); {
		if string(cfg[it.ks:it.ke]) == `"commitment"` {
			c, _ := decodeString(cfg[it.vs:it.ve])
			return c == "finalized" || c == "max" || c == "root"
		}
	}
	return true
}

// Solana commitment levels, as Commitment names them.
const (
	Finalized = "finalized"
	Confirmed = "confirmed"
	Processed = "processed"
)

// Commitment is the level a Solana read's config object (its last
// parameter) asks at: finalized when it names none (a node's default) or
// names finalized, max or root; confirmed for confirmed, single and
// singleGossip; processed for processed and recent. Confirmed and processed
// run about 32 slots ahead of finalized. It scans the params in place.
func Commitment(params json.RawMessage) string {
	p := TrimSpace(params)
	if len(p) == 0 || p[0] != '[' {
		return Finalized
	}
	var cfg []byte
	for it := (arrayIter{b: p, i: 1}); it.next(); {
		cfg = p[it.vs:it.ve]
	}
	if len(cfg) == 0 || cfg[0] != '{' {
		return Finalized
	}
	for it := (memberIter{b: cfg, i: 1}); it.next(); {
		if string(cfg[it.ks:it.ke]) == `"commitment"` {
			switch c, _ := decodeString(cfg[it.vs:it.ve]); c {
			case "confirmed", "single", "singleGossip":
				return Confirmed
			case "processed", "recent":
				return Processed
			}
			return Finalized
		}
	}
	return Finalized
}
