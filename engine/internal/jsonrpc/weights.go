package jsonrpc

// evmWeights are the built-in cost units of EVM methods for the hedge
// budget: what providers meter, so that hedging a heavy read costs the
// budget what it costs the bill. The figures are Alchemy's compute units
// per method (https://www.alchemy.com/docs/reference/compute-unit-costs,
// "EVM: Standard JSON-RPC Methods"; debug_trace* and trace_filter from
// their method pages, 40 CU) divided by eth_blockNumber's 10 CU, so that a
// trivial read weighs 1. eth_chainId and net_version, free there, weigh 1
// like any request (a weight is never 0). A method in methods.weights
// overrides its figure; one not listed weighs 1.
var evmWeights = map[string]float64{
	"eth_blockNumber": 1, "eth_chainId": 1, "net_version": 1, "eth_syncing": 1,
	"eth_feeHistory": 1, "eth_maxPriorityFeePerGas": 1, "eth_blobBaseFee": 1, "eth_createAccessList": 1,
	"eth_accounts": 1,

	// 20 CU
	"eth_getBalance": 2, "eth_getCode": 2, "eth_getStorageAt": 2, "eth_getTransactionCount": 2,
	"eth_getProof": 2, "eth_getAccount": 2, "eth_gasPrice": 2, "eth_estimateGas": 2,
	"eth_getBlockByNumber": 2, "eth_getBlockByHash": 2,
	"eth_getTransactionByHash": 2, "eth_getTransactionReceipt": 2,
	"eth_getTransactionByBlockHashAndIndex": 2, "eth_getTransactionByBlockNumberAndIndex": 2,
	"eth_getBlockTransactionCountByHash": 2, "eth_getBlockTransactionCountByNumber": 2,
	"eth_getUncleByBlockHashAndIndex": 2, "eth_getUncleByBlockNumberAndIndex": 2,
	"eth_getUncleCountByBlockHash": 2, "eth_getUncleCountByBlockNumber": 2,
	"web3_clientVersion": 2, "web3_sha3": 2,

	"eth_call":       2.6, // 26 CU
	"eth_simulateV1": 4,   // 40 CU
	"eth_getLogs":    6,   // 60 CU

	"eth_getBlockReceipts": 50, // 500 CU
}

// evmWeightPrefixes weigh the tracing families as a whole: 40 CU, Alchemy's
// figure for each debug_trace* method and for trace_filter.
var evmWeightPrefixes = []struct {
	prefix string
	weight float64
}{{"debug_trace", 4}, {"trace_", 4}}

// Solana has no built-in weights: no provider publishes per-method compute
// units for it that we could take ratios from (Alchemy's table is EVM
// only), so every Solana method weighs 1 unless methods.weights says.

// prefixWeight is the built-in weight of a tracing method the table does
// not list by name.
func (t *MethodTable) prefixWeight(method string) (float64, bool) {
	if t.solana {
		return 0, false
	}
	for _, p := range evmWeightPrefixes {
		if hasPrefixFold(method, p.prefix) {
			return p.weight, true
		}
	}
	return 0, false
}

func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerByte(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}
