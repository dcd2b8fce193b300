package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMethodTable_BuiltInClasses(t *testing.T) {
	tests := []struct {
		kind, method string
		want         Class
	}{
		{"evm", "eth_sendRawTransaction", ClassWrite},
		{"evm", "eth_sendTransaction", ClassWrite},
		{"evm", "eth_sendRawTransactionConditional", ClassWrite},
		{"evm", "eth_sendRawTransactionSync", ClassWrite},
		{"evm", "eth_sendBundle", ClassWrite},
		{"evm", "eth_sendPrivateTransaction", ClassWrite},
		{"evm", "eth_sendUserOperation", ClassWrite},
		{"evm", "personal_sendTransaction", ClassWrite},
		{"evm", "eth_submitWork", ClassWrite},
		{"evm", "eth_submitHashrate", ClassWrite},
		{"evm", "ETH_SENDRAWTRANSACTION", ClassWrite},
		{"evm", "eth_newFilter", ClassStateful},
		{"evm", "eth_newBlockFilter", ClassStateful},
		{"evm", "eth_newPendingTransactionFilter", ClassStateful},
		{"evm", "eth_getFilterChanges", ClassStateful},
		{"evm", "eth_getFilterLogs", ClassStateful},
		{"evm", "eth_uninstallFilter", ClassStateful},
		{"evm", "eth_subscribe", ClassStateful},
		{"evm", "eth_unsubscribe", ClassStateful},
		{"evm", "eth_call", ClassRead},
		{"evm", "eth_blockNumber", ClassRead},
		{"evm", "eth_getLogs", ClassRead},
		{"evm", "debug_traceTransaction", ClassRead},
		{"evm", "txpool_status", ClassRead},
		// Methods in no table are sent once, like writes.
		{"evm", "some_unknownMethod", ClassWrite},
		{"evm", "mev_sendBundle", ClassWrite},
		{"evm", "eth_signTransaction", ClassWrite},
		{"evm", "sendTransaction", ClassWrite},
		{"evm", "accountSubscribe", ClassWrite},
		{"evm", "getSlot", ClassWrite},
		{"solana", "sendTransaction", ClassWrite},
		{"solana", "requestAirdrop", ClassWrite},
		{"solana", "sendBundle", ClassWrite},
		{"solana", "accountSubscribe", ClassStateful},
		{"solana", "slotsUpdatesUnsubscribe", ClassStateful},
		{"solana", "logsSubscribe", ClassStateful},
		{"solana", "getSlot", ClassRead},
		{"solana", "getAccountInfo", ClassRead},
		{"solana", "simulateTransaction", ClassRead},
		{"solana", "getAsset", ClassWrite},
		{"solana", "eth_sendRawTransaction", ClassWrite},
		{"solana", "eth_newFilter", ClassWrite},
		{"solana", "eth_call", ClassWrite},
		{"", "eth_sendRawTransaction", ClassWrite},
	}
	tables := map[string]*MethodTable{}
	for _, tt := range tests {
		tab := tables[tt.kind]
		if tab == nil {
			tab = NewMethodTable(tt.kind, MethodLists{})
			tables[tt.kind] = tab
		}
		if got := tab.Class(tt.method); got != tt.want {
			t.Errorf("%s %s: class %v, want %v", tt.kind, tt.method, got, tt.want)
		}
	}
}

func TestMethodTable_ConfigOverrides(t *testing.T) {
	evm := NewMethodTable("evm", MethodLists{
		Writes:   []string{"eth_call", "both_rw", "all_three", "Custom_Send"},
		Stateful: []string{"my_newThing", "both_rs", "all_three"},
		Reads:    []string{"eth_getFilterChanges", "eth_sendBundle", "both_rw", "both_rs", "all_three", "MEV_sendBundle"},
	})
	for method, want := range map[string]Class{
		"mev_sendBundle":       ClassRead,
		"mev_other":            ClassWrite,
		"eth_call":             ClassWrite,
		"custom_send":          ClassWrite,
		"my_newThing":          ClassStateful,
		"eth_getFilterChanges": ClassStateful, // a built-in stateful or write method keeps its class
		"eth_sendBundle":       ClassWrite,
		"both_rw":              ClassWrite,
		"both_rs":              ClassStateful,
		"all_three":            ClassWrite,
		"eth_sendTransaction":  ClassWrite,
		"eth_uninstallFilter":  ClassStateful,
	} {
		if got := evm.Class(method); got != want {
			t.Errorf("evm %s: class %v, want %v", method, got, want)
		}
	}
	sol := NewMethodTable("solana", MethodLists{
		Reads:    []string{"accountSubscribe"},
		Stateful: []string{"getProgramAccounts"},
		Writes:   []string{"sendRawThing"},
	})
	for method, want := range map[string]Class{
		"accountSubscribe":   ClassStateful,
		"accountUnsubscribe": ClassStateful,
		"getProgramAccounts": ClassStateful,
		"sendRawThing":       ClassWrite,
		"sendTransaction":    ClassWrite,
	} {
		if got := sol.Class(method); got != want {
			t.Errorf("solana %s: class %v, want %v", method, got, want)
		}
	}
}

func TestMethodTable_Hedgeable(t *testing.T) {
	tab := NewMethodTable("evm", MethodLists{NoHedge: []string{"eth_getLogs", "debug_traceTransaction"}})
	for method, want := range map[string]bool{
		"eth_call":               true,
		"eth_blockNumber":        true,
		"eth_getLogs":            false,
		"ETH_GETLOGS":            false,
		"debug_traceTransaction": false,
		"eth_sendRawTransaction": false,
		"eth_getFilterChanges":   false,
		"eth_subscribe":          false,
	} {
		if got := tab.Hedgeable(method); got != want {
			t.Errorf("Hedgeable(%s) = %v, want %v", method, got, want)
		}
	}
}

// Built-in weights follow Alchemy's compute units over eth_blockNumber's;
// methods.weights overrides them (a tracing family's prefix too); anything
// unknown, and every Solana method, weighs 1.
func TestMethodTable_Weight(t *testing.T) {
	tab := NewMethodTable("evm", MethodLists{Weights: map[string]float64{"eth_getlogs": 75, "debug_tracetransaction": 300, "my_method": 3}})
	for method, want := range map[string]float64{
		"eth_getLogs":               75,
		"eth_getlogs":               75,
		"debug_traceTransaction":    300,
		"debug_traceCall":           4,
		"trace_replayTransaction":   4,
		"TRACE_BLOCK":               4,
		"eth_call":                  2.6,
		"ETH_CALL":                  2.6,
		"eth_getBlockReceipts":      50,
		"eth_getBalance":            2,
		"eth_getTransactionReceipt": 2,
		"eth_estimateGas":           2,
		"eth_blockNumber":           1,
		"eth_chainId":               1,
		"net_version":               1,
		"my_method":                 3,
		"eth_someFutureMethod":      1,
		"tracer":                    1,
		"":                          1,
	} {
		if got := tab.Weight(method); got != want {
			t.Errorf("evm Weight(%s) = %v, want %v", method, got, want)
		}
	}
	if got := NewMethodTable("evm", MethodLists{}).Weight("eth_getLogs"); got != 6 {
		t.Errorf("built-in eth_getLogs weight %v, want 6 (60 CU / 10)", got)
	}
	sol := NewMethodTable("solana", MethodLists{Weights: map[string]float64{"getprogramaccounts": 10}})
	for method, want := range map[string]float64{"getProgramAccounts": 10, "getSlot": 1, "getTransaction": 1, "eth_getLogs": 1, "trace_block": 1} {
		if got := sol.Weight(method); got != want {
			t.Errorf("solana Weight(%s) = %v, want %v", method, got, want)
		}
	}
}

func TestMethodTable_FilterRole(t *testing.T) {
	type role struct {
		creates     bool
		idParam     int
		unsupported bool
	}
	evm := NewMethodTable("evm", MethodLists{Stateful: []string{"my_session"}, Reads: []string{"eth_getFilterLogs"}})
	sol := NewMethodTable("solana", MethodLists{})
	tests := []struct {
		tab    *MethodTable
		method string
		want   role
	}{
		{evm, "eth_newFilter", role{true, -1, false}},
		{evm, "eth_newBlockFilter", role{true, -1, false}},
		{evm, "eth_newPendingTransactionFilter", role{true, -1, false}},
		{evm, "eth_getFilterChanges", role{false, 0, false}},
		{evm, "eth_uninstallFilter", role{false, 0, false}},
		{evm, "eth_getFilterLogs", role{false, 0, false}}, // listed as a read, still pinned
		{evm, "eth_subscribe", role{false, -1, true}},
		{evm, "eth_unsubscribe", role{false, -1, true}},
		{evm, "my_session", role{false, -1, false}},
		{evm, "eth_call", role{false, -1, false}},
		{sol, "accountSubscribe", role{false, -1, true}},
		{sol, "programUnsubscribe", role{false, -1, true}},
		{sol, "getSlot", role{false, -1, false}},
	}
	for _, tt := range tests {
		c, i, u := tt.tab.FilterRole(tt.method)
		if got := (role{c, i, u}); got != tt.want {
			t.Errorf("FilterRole(%s) = %+v, want %+v", tt.method, got, tt.want)
		}
	}
}

func TestMethodTable_TipDependent(t *testing.T) {
	evm := NewMethodTable("evm", MethodLists{})
	sol := NewMethodTable("solana", MethodLists{})
	hash := `"0x` + "ab" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd" + `"`
	tests := []struct {
		tab    *MethodTable
		method string
		params string
		want   bool
	}{
		{evm, "eth_blockNumber", `[]`, true},
		{evm, "eth_gasPrice", ``, true},
		{evm, "eth_chainId", `[]`, false},
		{evm, "net_version", ``, false},
		{evm, "web3_clientVersion", `[]`, false},
		{evm, "eth_getBlockByNumber", `["latest",false]`, true},
		{evm, "eth_getBlockByNumber", `["pending",false]`, true},
		{evm, "eth_getBlockByNumber", `["0x10d4f",true]`, true},
		{evm, "eth_getBlockByNumber", `["finalized",false]`, true},
		{evm, "eth_getBlockByNumber", `["safe",false]`, true},
		{evm, "eth_getBlockByNumber", `["earliest",false]`, false},
		{evm, "eth_getBlockReceipts", `[` + hash + `]`, false},
		{evm, "eth_getBalance", `["0xabc"]`, true},
		{evm, "eth_getBalance", `["0xabc","latest"]`, true},
		{evm, "eth_getBalance", `["0xabc",null]`, true},
		{evm, "eth_getBalance", `["0xabc","finalized"]`, true},
		{evm, "eth_getBalance", `["0xabc","earliest"]`, false},
		{evm, "eth_getBalance", `["0xabc",` + hash + `]`, false},
		{evm, "eth_getBalance", `["0xabc",{"blockHash":` + hash + `}]`, false},
		{evm, "eth_getBalance", `["0xabc",{"blockNumber":"0x1"}]`, true},
		{evm, "eth_getBalance", `["0xabc",{"blockNumber":"safe"}]`, true},
		{evm, "eth_getBalance", `["0xabc",{"blockNumber":"earliest"}]`, false},
		{evm, "eth_call", `[{"to":"0x1","data":"0x"},"finalized"]`, true},
		{evm, "eth_call", `[{"to":"0x1","data":"0x"}]`, true},
		{evm, "ETH_CALL", `[{"to":"0x1"}, "safe"]`, true},
		{evm, "eth_getStorageAt", `["0x1","0x0","finalized"]`, true},
		{evm, "eth_getStorageAt", `["0x1","0x0","latest"]`, true},
		{evm, "eth_getProof", `["0x1",[],"0x5"]`, true},
		{evm, "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"finalized"}]`, true},
		{evm, "eth_getLogs", `[{"fromBlock":"0x1","toBlock":"safe"}]`, true},
		{evm, "eth_getLogs", `[{"fromBlock":"0x0","toBlock":"earliest"}]`, false},
		{evm, "eth_getLogs", `[{"fromBlock":"0x1"}]`, true},
		{evm, "eth_getLogs", `[{"blockHash":` + hash + `}]`, false},
		{evm, "eth_getLogs", `[{"toBlock":"0x20"}]`, true},
		{evm, "eth_getBalance", `{"address":"0x1"}`, true},
		{evm, "eth_getBalance", `["0x1","finalized"`, true},
		{evm, "eth_getTransactionReceipt", `["0x1"]`, true},
		{evm, "some_unknownMethod", `[]`, true},
		{sol, "getSlot", `[{"commitment":"finalized"}]`, true},
		{sol, "getLatestBlockhash", ``, true},
		{sol, "getAccountInfo", `["addr",{"encoding":"base64"}]`, true},
		{sol, "getGenesisHash", ``, false},
		{sol, "getVersion", `[]`, false},
		{sol, "eth_chainId", `[]`, true},
	}
	for _, tt := range tests {
		var p json.RawMessage
		if tt.params != "" {
			p = json.RawMessage(tt.params)
		}
		if got := tt.tab.TipDependent(tt.method, p); got != tt.want {
			t.Errorf("TipDependent(%s, %s) = %v, want %v", tt.method, tt.params, got, tt.want)
		}
		// Of valid params, the variant that does not check them again agrees.
		if len(p) == 0 || json.Valid(p) {
			if got := tt.tab.TipDependentValid(tt.method, p); got != tt.want {
				t.Errorf("TipDependentValid(%s, %s) = %v, want %v", tt.method, tt.params, got, tt.want)
			}
		}
	}
}

func TestClass_String(t *testing.T) {
	for c, want := range map[Class]string{ClassRead: "read", ClassWrite: "write", ClassStateful: "stateful", Class(9): "class(9)"} {
		if got := c.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(c), got, want)
		}
	}
}

func TestConfigClassProblem_RefusesToLoosenABuiltInClass(t *testing.T) {
	for _, tt := range []struct {
		kind, method string
		class        Class
		want         string // a part of the problem; "" for none
	}{
		{"evm", "eth_sendRawTransaction", ClassRead, "is a write"},
		{"evm", "ETH_SENDRAWTRANSACTION", ClassStateful, "is a write"},
		{"evm", "eth_newFilter", ClassRead, "is stateful"},
		{"evm", "eth_uninstallFilter", ClassWrite, "is stateful"},
		{"solana", "accountSubscribe", ClassRead, "is stateful"},
		{"solana", "sendTransaction", ClassRead, "is a write"},
		{"evm", "eth_call", ClassWrite, ""}, // a read may be made more careful
		{"evm", "eth_getBalance", ClassStateful, ""},
		{"evm", "mev_sendBundle", ClassRead, ""}, // unknown: the config decides
		{"evm", "eth_sendRawTransaction", ClassWrite, ""},
	} {
		got := ConfigClassProblem(tt.kind, tt.method, tt.class)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s %s as %s: %q, want %q", tt.kind, tt.method, className(tt.class), got, tt.want)
		}
	}
}
