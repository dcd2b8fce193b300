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

func TestAppendStringResult(t *testing.T) {
	got := string(AppendStringResult(nil, json.RawMessage(`"a"`), `0x"1`))
	if want := `{"jsonrpc":"2.0","id":"a","result":"0x\"1"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
