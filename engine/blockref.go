package engine

import (
	"encoding/json"
	"strconv"
	"strings"
)

// blockParam is where EVM reads name an explicit block number.
var blockParam = map[string]int{
	"eth_getBlockByNumber":                    0,
	"eth_getBlockTransactionCountByNumber":    0,
	"eth_getTransactionByBlockNumberAndIndex": 0,
	"eth_getUncleCountByBlockNumber":          0,
	"eth_getBlockReceipts":                    0,
	"eth_getBalance":                          1,
	"eth_getCode":                             1,
	"eth_getTransactionCount":                 1,
	"eth_call":                                1,
	"eth_getStorageAt":                        2,
	"eth_getProof":                            2,
}

// requiredHead is the block number an EVM read names explicitly (0 when it
// names a tag or nothing): an endpoint whose head is below it would answer
// "not found" or null.
func requiredHead(method string, params json.RawMessage) int64 {
	i, ok := blockParam[method]
	if !ok || len(params) == 0 {
		return 0
	}
	var arr []json.RawMessage
	if json.Unmarshal(params, &arr) != nil || i >= len(arr) {
		return 0
	}
	var s string
	if json.Unmarshal(arr[i], &s) != nil || !strings.HasPrefix(s, "0x") {
		var obj struct {
			BlockNumber string `json:"blockNumber"` // EIP-1898
		}
		if json.Unmarshal(arr[i], &obj) != nil || !strings.HasPrefix(obj.BlockNumber, "0x") {
			return 0
		}
		s = obj.BlockNumber
	}
	v, err := strconv.ParseInt(s[2:], 16, 64)
	if err != nil {
		return 0
	}
	return v
}
