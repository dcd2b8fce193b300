package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

// A read given the pinned level is as tip-dependent as it was without it:
// the pin never takes a read out of lag protection. (With "finalized" and
// "safe" not tip-dependent, every untagged EVM read pinned lost it.)
func TestPinParams_PinnedReadStaysTipDependent(t *testing.T) {
	for _, tc := range []struct {
		kind string
		pins []string
		reqs map[string][]string // method: params naming no level
	}{
		{"evm", []string{"finalized", "safe"}, map[string][]string{
			"eth_getBalance":          {`["0xabc"]`, `["0xabc",null]`},
			"eth_getCode":             {`["0xabc"]`},
			"eth_getTransactionCount": {`["0xabc"]`},
			"eth_call":                {`[{"to":"0x1","data":"0x"}]`, `[{"to":"0x1"},null]`},
			"eth_getStorageAt":        {`["0x1","0x0"]`},
			"eth_getProof":            {`["0x1",[]]`},
		}},
		{"solana", []string{"finalized", "confirmed"}, map[string][]string{
			"getBalance": {`["addr"]`},
			"getSlot":    {``, `[]`},
		}},
	} {
		tab := NewMethodTable(tc.kind, MethodLists{})
		for _, pin := range tc.pins {
			for method, all := range tc.reqs {
				for _, params := range all {
					before := tab.TipDependent(method, json.RawMessage(params))
					pinned, ok := PinParams(tc.kind, pin, method, json.RawMessage(params))
					if !ok || !strings.Contains(string(pinned), `"`+pin+`"`) {
						t.Fatalf("%s pin %s: %s(%s) not pinned: %s", tc.kind, pin, method, params, pinned)
					}
					if after := tab.TipDependentValid(method, pinned); !before || !after {
						t.Errorf("%s pin %s: %s tip-dependent %v as sent (%s), %v pinned (%s)", tc.kind, pin, method, before, params, after, pinned)
					}
				}
			}
		}
	}
}

// sendTransaction gets the pin as its preflightCommitment, where it names
// none; one it names is left alone, and EVM writes are never pinned.
func TestPinParams_SendTransactionGetsThePinAsItsPreflightCommitment(t *testing.T) {
	for _, tc := range []struct{ params, want string }{
		{`["tx"]`, `["tx",{"preflightCommitment":"confirmed"}]`},
		{`["tx",null]`, `["tx",{"preflightCommitment":"confirmed"}]`},
		{`["tx",{"encoding":"base64"}]`, `["tx",{"encoding":"base64","preflightCommitment":"confirmed"}]`},
		{`["tx",{"preflightCommitment":"processed"}]`, ``},
	} {
		got, ok := PinParams("solana", "confirmed", "sendTransaction", json.RawMessage(tc.params))
		if tc.want == "" && ok || tc.want != "" && string(got) != tc.want {
			t.Errorf("%s: pinned %v to %s, want %q", tc.params, ok, got, tc.want)
		}
	}
	if !PinsWrite("solana", "sendTransaction") || PinsWrite("evm", "sendTransaction") || PinsWrite("solana", "getBalance") {
		t.Error("PinsWrite names a method other than Solana's sendTransaction")
	}
}
