package sim

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
)

var evmMethods = map[string]method{
	"eth_blockNumber":                 evmBlockNumber,
	"eth_chainId":                     evmChainID,
	"net_version":                     evmNetVersion,
	"web3_clientVersion":              evmClientVersion,
	"eth_gasPrice":                    constant("0x3b9aca00"),
	"eth_estimateGas":                 constant("0x5208"),
	"eth_getCode":                     constant("0x"),
	"eth_getLogs":                     evmGetLogs,
	"eth_getTransactionReceipt":       evmGetReceipt,
	"eth_getTransactionByHash":        evmGetTransaction,
	"eth_getBalance":                  evmGetBalance,
	"eth_getTransactionCount":         evmGetTransactionCount,
	"eth_call":                        evmCall,
	"eth_getBlockByNumber":            evmGetBlockByNumber,
	"eth_sendRawTransaction":          evmSend,
	"eth_sendTransaction":             evmSend,
	"eth_newFilter":                   newFilter,
	"eth_newBlockFilter":              newFilter,
	"eth_newPendingTransactionFilter": newFilter,
	"eth_getFilterChanges":            getFilter,
	"eth_getFilterLogs":               getFilter,
	"eth_uninstallFilter":             uninstallFilter,
	// Over HTTP, geth has no subscriptions and says so in its own words.
	"eth_subscribe":   refuse(CodeMethodNotFound, "notifications not supported"),
	"eth_unsubscribe": refuse(CodeServerError, "subscription not found"),
}

func refuse(code int, message string) method {
	return func(*Upstream, []json.RawMessage) (any, *Error) { return nil, &Error{Code: code, Message: message} }
}

func evmBlockNumber(u *Upstream, _ []json.RawMessage) (any, *Error) { return hexUint(u.Head()), nil }

func evmChainID(u *Upstream, _ []json.RawMessage) (any, *Error) { return hexUint(u.cfg.ChainID), nil }

func evmNetVersion(u *Upstream, _ []json.RawMessage) (any, *Error) {
	return strconv.FormatUint(u.cfg.ChainID, 10), nil
}

func evmClientVersion(u *Upstream, _ []json.RawMessage) (any, *Error) {
	return "rpcdash-sim/" + u.cfg.Name, nil
}

func constant(v any) method {
	return func(*Upstream, []json.RawMessage) (any, *Error) { return v, nil }
}

func hexUint[T int64 | uint64](n T) string { return "0x" + strconv.FormatUint(uint64(n), 16) }

func hexHash(d [32]byte) string { return "0x" + hex.EncodeToString(d[:]) }

func evmGetBalance(u *Upstream, args []json.RawMessage) (any, *Error) {
	addr, ok := stringArg(args, 0)
	if !ok {
		return nil, invalidParams("want [address, block?]")
	}
	return hexUint(digestUint("balance", u.cfg.ChainID, strings.ToLower(addr)) >> 8), nil
}

func evmGetTransactionCount(u *Upstream, args []json.RawMessage) (any, *Error) {
	addr, ok := stringArg(args, 0)
	if !ok {
		return nil, invalidParams("want [address, block?]")
	}
	return hexUint(digestUint("nonce", u.cfg.ChainID, strings.ToLower(addr)) % 1000), nil
}

// revertPrefix in call data makes eth_call revert.
const revertPrefix = "0xdeadbeef"

// RevertData is the data of the simulated revert: Error(string) with
// reason "sim: execution reverted", ABI-encoded.
var RevertData = "0x08c379a0" + abiString("sim: execution reverted")

func abiString(s string) string {
	word := func(n int) string {
		var b [32]byte
		for i := 31; n > 0; i-- {
			b[i] = byte(n)
			n >>= 8
		}
		return hex.EncodeToString(b[:])
	}
	padded := make([]byte, (len(s)+31)/32*32)
	copy(padded, s)
	return word(32) + word(len(s)) + hex.EncodeToString(padded)
}

func evmCall(u *Upstream, args []json.RawMessage) (any, *Error) {
	var call struct {
		To    string `json:"to"`
		Data  string `json:"data"`
		Input string `json:"input"`
	}
	if len(args) == 0 || json.Unmarshal(args[0], &call) != nil {
		return nil, invalidParams("want [call, block?]")
	}
	data := call.Data
	if data == "" {
		data = call.Input
	}
	if strings.HasPrefix(strings.ToLower(data), revertPrefix) {
		return nil, &Error{Code: CodeReverted, Message: "execution reverted", Data: RevertData}
	}
	return hexHash(digest("call", u.cfg.ChainID, strings.ToLower(call.To), strings.ToLower(data))), nil
}

// evmGetBlockByNumber resolves tags against this upstream's head; a number
// above it is not known yet (null), as on a lagging node.
func evmGetBlockByNumber(u *Upstream, args []json.RawMessage) (any, *Error) {
	tag, ok := stringArg(args, 0)
	if !ok {
		return nil, invalidParams("want [block, fullTransactions]")
	}
	head := u.Head()
	var n int64
	switch tag {
	case "latest", "pending":
		n = head
	case "finalized":
		n = max(head-64, 0)
	case "safe":
		n = max(head-32, 0)
	case "earliest":
		n = 0
	default:
		v, err := parseHexQuantity(tag)
		if err != nil {
			return nil, invalidParams("bad block number " + strconv.Quote(tag))
		}
		n = v
		if n > head {
			return nil, nil
		}
	}
	return u.evmBlock(n), nil
}

func (u *Upstream) evmBlockHash(n int64) string {
	return hexHash(digest("block", u.cfg.ChainID, n))
}

func (u *Upstream) evmBlock(n int64) map[string]any {
	parent := "0x" + strings.Repeat("0", 64)
	if n > 0 {
		parent = u.evmBlockHash(n - 1)
	}
	zero := "0x" + strings.Repeat("0", 64)
	// The members geth gives a post-merge block: ethers' block formatter
	// refuses one without difficulty or extraData.
	return map[string]any{
		"number":                hexUint(n),
		"hash":                  u.evmBlockHash(n),
		"parentHash":            parent,
		"timestamp":             hexUint(blockTimestamp(n, u.cfg.BlockTime)),
		"gasLimit":              "0x1c9c380",
		"gasUsed":               "0x0",
		"baseFeePerGas":         "0x3b9aca00",
		"difficulty":            "0x0",
		"extraData":             "0x",
		"miner":                 "0x" + strings.Repeat("0", 40),
		"mixHash":               hexHash(digest("mix", u.cfg.ChainID, n)),
		"nonce":                 "0x0000000000000000",
		"stateRoot":             hexHash(digest("state", u.cfg.ChainID, n)),
		"receiptsRoot":          emptyTrie,
		"transactionsRoot":      emptyTrie,
		"sha3Uncles":            emptyUncles,
		"logsBloom":             "0x" + strings.Repeat("0", 512),
		"withdrawalsRoot":       emptyTrie,
		"withdrawals":           []any{},
		"parentBeaconBlockRoot": zero,
		"size":                  "0x244",
		"uncles":                []any{},
		"transactions":          []any{},
	}
}

// The roots of an empty trie and of an empty uncle list, as every node
// gives them for a block without transactions.
const (
	emptyTrie   = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"
	emptyUncles = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347"
)

// landedTxs: a transaction a sim took is mined in the next block (see
// landed.go); its receipt is null on a node that has not reached it.
var landedTxs = newLandedRefs()

func evmSend(u *Upstream, args []json.RawMessage) (any, *Error) {
	if len(args) == 0 {
		return nil, invalidParams("want [transaction]")
	}
	hash := hexHash(digest("tx", u.cfg.ChainID, string(args[0]))) // eth_sendTransaction's object, placeholder bytes
	if raw, ok := stringArg(args, 0); ok && len(raw) > 2 && raw[:2] == "0x" {
		if b, err := hex.DecodeString(raw[2:]); err == nil {
			hash = hexHash(keccak256(b)) // a signed transaction's hash, as the client computes it
		}
	}
	landedTxs.add(hash, u.Head()+1)
	return hash, nil
}

// landedTx reads the hash a lookup names, and the block of the
// transaction a sim took by it; ok false (with an error for bad params)
// for any other.
func landedTx(args []json.RawMessage) (hash string, block int64, ok bool, err *Error) {
	hash, ok = stringArg(args, 0)
	if !ok {
		return "", 0, false, invalidParams("want [hash]")
	}
	hash = strings.ToLower(hash)
	block, ok = landedTxs.at(hash)
	return hash, block, ok, nil
}

// evmGetTransaction answers a transaction a sim took: pending (no block)
// until this node's head reaches its block, then in it; null for any
// other hash. (viem's waitForTransactionReceipt asks it while the receipt
// is not there yet, and failed on the sim's "does not exist".)
func evmGetTransaction(u *Upstream, args []json.RawMessage) (any, *Error) {
	hash, n, ok, err := landedTx(args)
	if !ok {
		return nil, err
	}
	tx := map[string]any{
		"hash": hash, "type": "0x2", "chainId": hexUint(u.cfg.ChainID), "nonce": "0x0",
		"from": "0x" + strings.Repeat("0", 40), "to": "0x" + strings.Repeat("0", 40),
		"value": "0x0", "gas": "0x5208", "maxFeePerGas": "0x77359400", "maxPriorityFeePerGas": "0x3b9aca00",
		"gasPrice": "0x3b9aca00", "input": "0x", "accessList": []any{}, "v": "0x0", "yParity": "0x0",
		"r": "0x1", "s": "0x1", "blockHash": nil, "blockNumber": nil, "transactionIndex": nil,
	}
	if n <= u.Head() {
		tx["blockHash"], tx["blockNumber"], tx["transactionIndex"] = u.evmBlockHash(n), hexUint(n), "0x0"
	}
	return tx, nil
}

// evmGetReceipt answers the receipt of a transaction a sim took, once this
// node's head has reached its block; null before, and for any other hash.
func evmGetReceipt(u *Upstream, args []json.RawMessage) (any, *Error) {
	hash, n, ok, err := landedTx(args)
	if !ok || n > u.Head() {
		return nil, err
	}
	return map[string]any{
		"transactionHash":   hash,
		"transactionIndex":  "0x0",
		"blockHash":         u.evmBlockHash(n),
		"blockNumber":       hexUint(n),
		"from":              "0x" + strings.Repeat("0", 40),
		"to":                "0x" + strings.Repeat("0", 40),
		"cumulativeGasUsed": "0x5208",
		"gasUsed":           "0x5208",
		"effectiveGasPrice": "0x3b9aca00",
		"contractAddress":   nil,
		"logs":              []any{},
		"logsBloom":         "0x" + strings.Repeat("0", 512),
		"status":            "0x1",
		"type":              "0x2",
	}, nil
}

func parseHexQuantity(s string) (int64, error) {
	if len(s) < 3 || (s[:2] != "0x" && s[:2] != "0X") {
		return 0, strconv.ErrSyntax
	}
	v, err := strconv.ParseUint(s[2:], 16, 63)
	return int64(v), err
}
