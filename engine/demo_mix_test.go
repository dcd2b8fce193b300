package engine

import (
	"slices"
	"testing"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// The default mix of chain.kind sends only what the method tables call
// reads: a method [methods] moved to the writes or the stateful class is
// dropped from it, the others keep their weights.
func TestDemo_DefaultMixDropsReclassifiedMethods(t *testing.T) {
	table := jsonrpc.NewMethodTable("evm", jsonrpc.MethodLists(MethodsConfig{
		Writes: []string{"eth_blockNumber"}, Stateful: []string{"eth_getBalance"}}))
	mix, err := parseDemoMix(nil, "evm", table)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range mix {
		got = append(got, m.Method)
	}
	want := []string{"eth_call", "eth_getTransactionCount", "eth_getBlockByNumber"}
	if !slices.Equal(got, want) || mix[0].Weight != 2 {
		t.Errorf("default mix %v (first weight %v), want %v with eth_call weighing 2", got, mix[0].Weight, want)
	}
}
