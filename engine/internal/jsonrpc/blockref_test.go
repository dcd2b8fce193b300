package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestRequiredHead(t *testing.T) {
	for _, c := range []struct {
		method, params string
		want           int64
	}{
		{"eth_getBlockByNumber", `["0x1b4", true]`, 0x1b4},
		{"eth_getBalance", `["0xabc", "0x10"]`, 16},
		{"eth_getBalance", ` [ "0xabc" , "0XFF" ] `, 0},
		{"eth_getBalance", `["0xabc", "latest"]`, 0},
		{"eth_getBalance", `["0xabc", {"blockNumber": "0xA"}]`, 10},
		{"eth_getBalance", `["0xabc", {"blockHash": "0x01"}]`, 0},
		{"eth_call", `[{"to":"0x1","data":"0xdeadbeef"}, "0x2a"]`, 42},
		{"eth_getStorageAt", `["0x1", "0x0", "0xffffffffffffff"]`, 0xffffffffffffff},
		{"eth_getStorageAt", `["0x1", "0x0", "0xfffffffffffffffff"]`, 0},
		{"eth_getStorageAt", `["0x1", "0x0", "0x12g"]`, 0},
		{"eth_getBalance", `["0xabc"]`, 0},
		{"eth_chainId", `[]`, 0},
		{"eth_getBalance", ``, 0},
		{"eth_getHeaderByNumber", `["0x2a"]`, 42},
		{"trace_block", `["0x2a"]`, 42},
		// A log filter: its toBlock, else its fromBlock when the range runs
		// to the node's latest; nothing for a blockHash.
		{"eth_getLogs", `[{"fromBlock":"0x1","toBlock":"0x2a"}]`, 42},
		{"eth_getLogs", `[{"fromBlock":"0x2a"}]`, 42},
		{"eth_getLogs", `[{"fromBlock":"0x2a","toBlock":"latest"}]`, 42},
		{"eth_getLogs", `[{"fromBlock":"0x2a","toBlock":"earliest"}]`, 0},
		{"eth_getLogs", `[{"toBlock":"latest"}]`, 0},
		{"eth_getLogs", `[{"blockHash":"0xab","toBlock":"0x2a"}]`, 0},
		{"eth_getLogs", `[{}]`, 0},
		{"eth_getLogs", `[]`, 0},
		{"trace_filter", `[{"fromBlock":"0x1","toBlock":"0x2a"}]`, 42},
	} {
		if got := RequiredHead(c.method, json.RawMessage(c.params)); got != c.want {
			t.Errorf("requiredHead(%s, %s) = %d, want %d", c.method, c.params, got, c.want)
		}
	}
}

func TestFilterIDParam(t *testing.T) {
	for params, want := range map[string]string{`["0x1f"]`: "0x1f", ` [ "0xab" ] `: "0xab", `[1]`: "", `[]`: "", ``: ""} {
		got, ok := StringParam(json.RawMessage(params), 0)
		if got != want || ok != (want != "") {
			t.Errorf("filterIDParam(%s) = %q, %v", params, got, ok)
		}
	}
}

func TestWithStringParam(t *testing.T) {
	for params, want := range map[string]string{
		`["0x1f"]`:        `["0xUP"]`,
		` [ "0xab" , 1 ]`: `[ "0xUP" , 1 ]`,
		`[1]`:             `["0xUP"]`,
		`[]`:              ``,
		`{"id":"0x1"}`:    ``,
		``:                ``,
	} {
		got, ok := WithStringParam(json.RawMessage(params), 0, "0xUP")
		if string(got) != want || ok != (want != "") {
			t.Errorf("WithStringParam(%s) = %s, %v; want %s", params, got, ok, want)
		}
	}
}

// A request's filter id is replaced in place of the parsed request, with
// the same bytes WithParams would build and the parse's own reading of
// them, and the original request left as it was.
func TestRequestWithStringParam_IsWithParamsWithoutAParse(t *testing.T) {
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"eth_getFilterChanges","params":["0x1f"]}`,
		"{ \"x\" : {\"params\":[1]} , \"jsonrpc\":\"2.0\", \"id\" : \"a\" , \"method\":\"eth_getFilterLogs\", \"params\" : [ \"0x1f\" , 2 ] }",
		`{"jsonrpc":"2.0","params":["0xa"],"id":1,"method":"eth_uninstallFilter","params":["0xb"]}`,
		`{"jsonrpc":"2.0","method":"eth_getFilterChanges","params":["0x1f"]}`,
	} {
		body, perr := ParseBody([]byte(raw))
		if perr != nil || body.Elements[0].Req == nil {
			t.Fatalf("setup %s: %v %v", raw, perr, body.Elements[0].Err)
		}
		r := body.Elements[0].Req
		before := string(r.Raw)
		got, ok := r.WithStringParam(0, `0xUP"`)
		params, _ := WithStringParam(r.Params, 0, `0xUP"`)
		want, err := r.WithParams(params)
		if !ok || err != nil {
			t.Fatalf("%s: ok %v, WithParams: %v", raw, ok, err)
		}
		if string(got.Raw) != string(want.Raw) || string(got.Params) != string(want.Params) ||
			string(got.ID) != string(want.ID) || got.Method != want.Method || got.IsNotification() != want.IsNotification() {
			t.Errorf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
		if string(r.Raw) != before {
			t.Errorf("original changed: %s", r.Raw)
		}
	}
	r := NewRequest(json.RawMessage(`1`), "eth_getFilterChanges", json.RawMessage(`[]`))
	if _, ok := r.WithStringParam(0, "0xUP"); ok {
		t.Error("params without element 0: replaced")
	}
}

func TestAppendStringResult(t *testing.T) {
	got := string(AppendStringResult(nil, json.RawMessage(`"a"`), `0x"1`))
	if want := `{"jsonrpc":"2.0","id":"a","result":"0x\"1"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestQuantity(t *testing.T) {
	for v, want := range map[string]int64{`"0x2a"`: 42, ` "0x10" `: 16, `"42"`: 0, `42`: 0, `null`: 0, ``: 0} {
		if got := Quantity(json.RawMessage(v)); got != want {
			t.Errorf("Quantity(%s) = %d, want %d", v, got, want)
		}
	}
}

func TestResultNumber(t *testing.T) {
	for body, want := range map[string]int64{
		`{"jsonrpc":"2.0","id":1,"result":{"hash":"0x01","number":"0x1b4","transactions":[]}}`: 0x1b4,
		` { "id" : "a" , "jsonrpc" : "2.0" , "result" : { "number" : "0x10" } } `:              16,
		`{"jsonrpc":"2.0","id":1,"result":{"transactions":[{"number":"0x1"}],"number":"0x2"}}`: 2,
		`{"result":{"parentHash":"0x0","number":"0xa",` + "\x00 not read past the number":      10,
		`{"jsonrpc":"2.0","id":{"result":{"number":"0x5"}},"result":{"number":"0x6"}}`:         6,
		`{"jsonrpc":"2.0","id":1,"result":null}`:                                               0,
		`{"jsonrpc":"2.0","id":1,"result":{"hash":"0x01"}}`:                                    0,
		`{"jsonrpc":"2.0","id":1,"result":{"number":12}}`:                                      0,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}`:                       0,
		`[{"jsonrpc":"2.0","id":1,"result":{"number":"0x1"}}]`:                                 0,
		`{"jsonrpc":"2.0","id":1,"result`:                                                      0,
		``:                                                                                     0,
	} {
		if got := ResultNumber([]byte(body)); got != want {
			t.Errorf("ResultNumber(%q) = %d, want %d", body, got, want)
		}
	}
}

func TestContextSlot(t *testing.T) {
	for body, want := range map[string]int64{
		`{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":546571489},"value":4938}}`:                      546571489,
		`{"jsonrpc":"2.0","id":1,"result":{"context":{"apiVersion":"2.0.0","slot":17},"value":{"a":1}}}`:     17,
		` { "result" : { "value" : [ {"context":{"slot":9}} ] , "context" : { "slot" : 12 } } , "id" : 1 } `: 12,
		`{"id":{"result":{"context":{"slot":5}}},"result":{"context":{"slot":6},"value":null}}`:              6,
		`{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":7},` + "\x00 not read past the slot":            7,
		`{"jsonrpc":"2.0","id":1,"result":546571489}`:                                                        0,
		`{"jsonrpc":"2.0","id":1,"result":{"value":1}}`:                                                      0,
		`{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":"12"},"value":1}}`:                              0,
		`{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":-1},"value":1}}`:                                0,
		`{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":1.5},"value":1}}`:                               0,
		`{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":99999999999999999999},"value":1}}`:              0,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32016,"message":"x","data":{"contextSlot":3}}}`:            0,
		`[{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":1}}}]`:                                         0,
		`{"jsonrpc":"2.0","id":1,"result`:                                                                    0,
		``:                                                                                                   0,
	} {
		if got := ContextSlot([]byte(body)); got != want {
			t.Errorf("ContextSlot(%q) = %d, want %d", body, got, want)
		}
	}
}

func TestReadsLatestBlock(t *testing.T) {
	for _, c := range []struct {
		method, params string
		want           bool
	}{
		{"eth_getBlockByNumber", `["latest", false]`, true},
		{"eth_getBlockByNumber", ` [ "latest" ] `, true},
		{"eth_getBlockByNumber", `["pending", false]`, false},
		{"eth_getBlockByNumber", `["finalized", false]`, false},
		{"eth_getBlockByNumber", `["0x10", false]`, false},
		{"eth_getHeaderByNumber", `["latest"]`, true},
		{"eth_getBlockByHash", `["latest", false]`, false},
		{"eth_getBalance", `["latest"]`, false},
	} {
		if got := ReadsLatestBlock(c.method, json.RawMessage(c.params)); got != c.want {
			t.Errorf("ReadsLatestBlock(%s, %s) = %v", c.method, c.params, got)
		}
	}
}

func TestNamedBlock_TheHighestBlockOrSlotAReadNames(t *testing.T) {
	tests := []struct {
		solana bool
		method string
		params string
		want   int64
	}{
		{false, "eth_call", `[{"to":"0x1"},"0x10"]`, 16},
		{false, "eth_call", `[{"to":"0x1"},"latest"]`, 0},
		{false, "eth_getBlockReceipts", `["0x20"]`, 32},
		{false, "eth_getLogs", `[{"fromBlock":"0x10","toBlock":"0x12"}]`, 18},
		{false, "eth_getLogs", `[{"fromBlock":"0x10","toBlock":"latest"}]`, 16},
		{false, "eth_getLogs", `[{"blockHash":"0xab"}]`, 0},
		{false, "eth_getTransactionReceipt", `["0xab"]`, 0},
		{true, "getBlock", `[300,{"commitment":"confirmed"}]`, 300},
		{true, "getBlockTime", `[301]`, 301},
		{true, "getBalance", `["addr",{"minContextSlot":302}]`, 302},
		{true, "getBalance", `["addr"]`, 0},
		{true, "getSlot", `[]`, 0},
	}
	for _, tt := range tests {
		if got := NamedBlock(tt.solana, tt.method, json.RawMessage(tt.params)); got != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.params, got, tt.want)
		}
	}
}

func TestAtFinalized_OnlyTheDefaultAndFinalizedCommitment(t *testing.T) {
	for params, want := range map[string]bool{
		``: true, `[]`: true, `[null]`: true, `[{}]`: true, `[{"minContextSlot":5}]`: true,
		`[{"commitment":"finalized"}]`: true, `[{"commitment":"max"}]`: true,
		`[{"commitment":"confirmed"}]`: false, `[{"commitment":"processed"}]`: false,
		`{"commitment":"finalized"}`: false, `[5]`: false,
	} {
		if got := AtFinalized("getSlot", json.RawMessage(params)); got != want {
			t.Errorf("getSlot %s: AtFinalized %v, want %v", params, got, want)
		}
	}
	if AtFinalized("eth_blockNumber", nil) {
		t.Error("eth_blockNumber has no commitment")
	}
}

func TestLogsFromBeyondTag(t *testing.T) {
	const msg = "invalid block range params"
	for params, want := range map[string]bool{
		`[{"fromBlock":"0x10","toBlock":"latest"}]`:    true,
		`[{"fromBlock":"0x10"}]`:                       true,
		`[{"fromBlock":"0x10","toBlock":null}]`:        true,
		`[{"toBlock":"finalized","fromBlock":"0x10"}]`: true,
		`[{"fromBlock":"0x10","toBlock":"0x8"}]`:       false, // malformed anywhere
		`[{"fromBlock":"0x10","toBlock":"earliest"}]`:  false,
		`[{"fromBlock":"latest","toBlock":"latest"}]`:  false,
		`[{"blockHash":"0xab","toBlock":"latest"}]`:    false,
		`[]`: false,
	} {
		if got := LogsFromBeyondTag("eth_getLogs", json.RawMessage(params), msg); got != want {
			t.Errorf("%s: %v, want %v", params, got, want)
		}
	}
	if LogsFromBeyondTag("eth_call", json.RawMessage(`[{"fromBlock":"0x10"}]`), msg) ||
		LogsFromBeyondTag("eth_getLogs", json.RawMessage(`[{"fromBlock":"0x10"}]`), "exceed maximum block range") {
		t.Error("another method or message taken for a range beyond the node's head")
	}
}

func TestCommitment_ReadFromTheLastParameter(t *testing.T) {
	for params, want := range map[string]string{
		``:                                Finalized,
		`[]`:                              Finalized,
		`[{"commitment":"finalized"}]`:    Finalized,
		`[{"commitment":"root"}]`:         Finalized,
		`[{"commitment":"confirmed"}]`:    Confirmed,
		`[{"commitment":"singleGossip"}]`: Confirmed,
		`[{"commitment":"processed"}]`:    Processed,
		`[{"commitment":"recent"}]`:       Processed,
		`["key", {"minContextSlot": 5}]`:  Finalized,
		`[7, {"commitment":"confirmed"}]`: Confirmed,
		`["key", {"encoding":"base64","commitment":"processed"}]`: Processed,
		`{"commitment":"confirmed"}`:                              Finalized,
	} {
		if got := Commitment(json.RawMessage(params)); got != want {
			t.Errorf("%s: %s, want %s", params, got, want)
		}
	}
}

func TestReadSlot(t *testing.T) {
	for _, c := range []struct {
		method, body string
		want         int64
	}{
		{"getEpochInfo", `{"jsonrpc":"2.0","id":1,"result":{"absoluteSlot":166598,"blockHeight":166500,"epoch":27,"slotIndex":2790,"slotsInEpoch":8192}}`, 166598},
		{"getEpochInfo", `{"jsonrpc":"2.0","id":1,"result":{"epoch":27,"absoluteSlot":166598}}`, 166598},
		{"getEpochInfo", `{"jsonrpc":"2.0","id":1,"result":{"absoluteSlot":"166598"}}`, 0},
		{"getEpochInfo", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}`, 0},
		{"getBalance", `{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":7},"value":1}}`, 7},
		{"getBalance", `{"jsonrpc":"2.0","id":1,"result":{"absoluteSlot":166598}}`, 0},
	} {
		if got := ReadSlot(c.method, []byte(c.body)); got != c.want {
			t.Errorf("ReadSlot(%s, %s) = %d, want %d", c.method, c.body, got, c.want)
		}
	}
}
