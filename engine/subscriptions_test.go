package engine_test

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
)

// eth_unsubscribe over HTTP is answered as geth v1.17 answers it, code for
// code: its params are read before the id is looked up (-32602 for none, a
// number, two), and a name in another case is a method geth does not have
// (-32601). rpcdash answered all of these -32000 "subscription not found".
func TestSubscriptions_UnsubscribeErrorsKeepGethsCodes(t *testing.T) {
	h := newHarness(t, nil, sim.Config{})
	for _, c := range []struct {
		body string
		code float64
		says string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"eth_unsubscribe","params":["0x1"]}`, -32000, "subscription not found"},
		{`{"jsonrpc":"2.0","id":1,"method":"eth_unsubscribe","params":[]}`, -32602, "missing value for required argument 0"},
		{`{"jsonrpc":"2.0","id":1,"method":"eth_unsubscribe"}`, -32602, "missing value for required argument 0"},
		{`{"jsonrpc":"2.0","id":1,"method":"eth_unsubscribe","params":[null]}`, -32602, "missing value for required argument 0"},
		{`{"jsonrpc":"2.0","id":1,"method":"eth_unsubscribe","params":[1]}`, -32602, "invalid argument 0"},
		{`{"jsonrpc":"2.0","id":1,"method":"eth_unsubscribe","params":["0x1",2]}`, -32602, "too many arguments, want at most 1"},
		{`{"jsonrpc":"2.0","id":1,"method":"Eth_Unsubscribe","params":["0x1"]}`, -32601, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`, -32601, "notifications not supported"},
	} {
		r := h.post(c.body)
		e := r.rpcError()
		if e == nil || e["code"] != c.code || !strings.Contains(e["message"].(string), c.says) {
			t.Errorf("%s: got %s, want code %v saying %q", c.body, r.body, c.code, c.says)
		}
	}
	if n := h.upstreamCount("eth_unsubscribe") + h.upstreamCount("Eth_Unsubscribe"); n != 0 {
		t.Errorf("%d sent upstream, want none", n)
	}
}
