package jsonrpc

import (
	"testing"
	"time"
)

func TestRequestTimeout_BuiltInsAndConfigured(t *testing.T) {
	evm := NewMethodTable("evm", MethodLists{Timeouts: map[string]time.Duration{"eth_call": 2 * time.Second}})
	solana := NewMethodTable("solana", MethodLists{})
	for _, c := range []struct {
		table  *MethodTable
		method string
		d      time.Duration
		source int
	}{
		{evm, "eth_sendRawTransactionSync", ReceiptWaitTimeout, TimeoutReceiptWait},
		{evm, "ETH_SENDRAWTRANSACTIONSYNC", ReceiptWaitTimeout, TimeoutReceiptWait},
		{evm, "eth_sendRawTransaction", 0, TimeoutGeneral},
		{evm, "eth_getLogs", LongReadTimeout, TimeoutLongRead},
		{evm, "debug_traceTransaction", LongReadTimeout, TimeoutLongRead},
		{evm, "eth_call", 2 * time.Second, TimeoutConfigured},
		{solana, "eth_sendRawTransactionSync", 0, TimeoutGeneral},
		{solana, "getProgramAccounts", LongReadTimeout, TimeoutLongRead},
		{solana, "getInflationReward", LongReadTimeout, TimeoutLongRead},
		{solana, "getSignaturesForAddress", 0, TimeoutGeneral},
		{solana, "getSupply", LongReadTimeout, TimeoutLongRead},
		{solana, "getTokenLargestAccounts", LongReadTimeout, TimeoutLongRead},
		{solana, "getBalance", 0, TimeoutGeneral},
	} {
		if d, source := c.table.RequestTimeout(c.method); d != c.d || source != c.source {
			t.Errorf("%s: %s from %d; want %s from %d", c.method, d, source, c.d, c.source)
		}
	}
}
