package jsonrpc

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestMethodTable_ReadsPending(t *testing.T) {
	evm := NewMethodTable("evm", MethodLists{})
	tests := []struct {
		method, params string
		want           bool
	}{
		{"eth_getTransactionCount", `["0xaa","pending"]`, true},
		{"eth_getTransactionCount", `["0xaa","latest"]`, false},
		{"eth_getTransactionCount", `["0xaa"]`, false},
		{"eth_getTransactionCount", `["0xaa",{"blockNumber":"pending"}]`, true},
		{"eth_getBlockByNumber", `["pending",false]`, true},
		{"ETH_GETBLOCKBYNUMBER", `[ "pending" , false]`, true},
		{"eth_getBlockByNumber", `["0x10",false]`, false},
		{"eth_call", `[{"to":"0xbb","data":"0x"},"pending"]`, true},
		{"eth_estimateGas", `[{"to":"0xbb"},"pending"]`, true},
		{"eth_getBalance", `["0xaa","pending"]`, true},
		{"eth_getLogs", `[{"fromBlock":"0x1","toBlock":"pending"}]`, true},
		{"eth_getLogs", `[{"fromBlock":"pending"}]`, true},
		{"eth_getLogs", `[{"fromBlock":"0x1","toBlock":"latest"}]`, false},
		{"txpool_content", `[]`, true},
		{"txpool_status", ``, true},
		{"eth_pendingTransactions", `[]`, true},
		{"eth_blockNumber", `[]`, false},
		{"eth_getTransactionCount", `["0xaa","pending"`, false}, // not JSON
		{"eth_chainId", `["pending"]`, false},
	}
	for _, tc := range tests {
		if got := evm.ReadsPending(tc.method, json.RawMessage(tc.params)); got != tc.want {
			t.Errorf("ReadsPending(%s, %s) = %v, want %v", tc.method, tc.params, got, tc.want)
		}
	}
	if NewMethodTable("solana", MethodLists{}).ReadsPending("getBalance", json.RawMessage(`["x","pending"]`)) {
		t.Error("a Solana read has no pending tag")
	}
}

func TestMethodTable_TxRefs(t *testing.T) {
	evm := NewMethodTable("evm", MethodLists{})
	sol := NewMethodTable("solana", MethodLists{})
	tests := []struct {
		table          *MethodTable
		method, params string
		want           []string // nil: looks up none
	}{
		{evm, "eth_getTransactionByHash", `["0xABcd"]`, []string{"0xabcd"}},
		{evm, "eth_getTransactionReceipt", `["0xabcd"]`, []string{"0xabcd"}},
		{evm, "eth_getRawTransactionByHash", `["0xabcd"]`, []string{"0xabcd"}},
		{evm, "eth_getTransactionByHash", `[42]`, nil},
		{evm, "eth_getTransactionByHash", `[]`, nil},
		{evm, "eth_getBalance", `["0xabcd","latest"]`, nil},
		{sol, "getTransaction", `["5VERv8NMvzbJMEkV", {"encoding":"json"}]`, []string{"5VERv8NMvzbJMEkV"}},
		{sol, "getSignatureStatuses", `[["sigA","sigB"],{"searchTransactionHistory":true}]`, []string{"sigA", "sigB"}},
		{sol, "getSignatureStatuses", `[[]]`, nil},
		{sol, "getSignatureStatuses", `[["sigA",7]]`, nil},
		{sol, "eth_getTransactionByHash", `["0xabcd"]`, nil},
		{evm, "eth_getTransactionByHash", `["` + string(make([]byte, MaxTxRef+1)) + `"]`, nil},
	}
	for _, tc := range tests {
		var got []string
		ok := tc.table.TxRefs(tc.method, json.RawMessage(tc.params), func(ref string) bool {
			got = append(got, ref)
			return true
		})
		if ok != (tc.want != nil) || ok && !slices.Equal(got, tc.want) {
			t.Errorf("TxRefs(%s, %s) = %v %q, want %q", tc.method, tc.params, ok, got, tc.want)
		}
	}
}
