package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// Method names come from clients: 130 junk names (each answered -32601
// method not found) took the 128 tracked slots for good, and every method
// seen after them, eth_getBalance too, was counted as "other" in the
// status and the metrics until restart, as a write that is not hedged. A
// name gets an entry of its own only once it is known to exist: listed in
// a method table, or answered by an endpoint as a method it has
// (vendor_balance, from its second call); junk, and a listed method spelt
// in another case (which the node does not know), stay "other".
func TestMethods_JunkNamesTakeNoSlot(t *testing.T) {
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct {
			ID     json.RawMessage
			Method string
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &call)
		switch call.Method {
		case "eth_getBalance", "vendor_balance", "eth_chainId", "eth_blockNumber":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, call.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"the method %s does not exist/is not available"}}`, call.ID, call.Method)
		}
	}))
	t.Cleanup(node.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "node", URL: node.URL}}
	})
	const junk = 130
	for i := 1; i <= junk; i++ {
		if e := h.call(i, fmt.Sprintf("junk_%d", i)).rpcError(); e == nil || e["code"] != float64(-32601) {
			t.Fatalf("junk_%d: %v, want the node's -32601", i, e)
		}
	}
	for i := range 3 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
		mustOK(t, h.call(i, "vendor_balance"))
	}
	h.call(1, "ETH_GETBALANCE", addr, "latest")

	st := h.status()
	balance, ok := st.Methods["eth_getBalance"]
	if !ok || balance.Requests != 3 || balance.Class != engine.ClassRead || !balance.Hedgeable {
		t.Errorf("eth_getBalance: %+v (listed %v), want 3 requests of its own, a hedgeable read", balance, ok)
	}
	if _, ok := st.Endpoints[0].Methods["eth_getBalance"]; !ok {
		t.Errorf("the endpoint keeps no eth_getBalance figures of its own")
	}
	if got := st.Methods["vendor_balance"].Requests; got != 2 {
		t.Errorf("vendor_balance: %d requests of its own, want 2 (its first answer proved it)", got)
	}
	if got := st.Methods["other"].Requests; got != junk+2 {
		t.Errorf("other: %d requests, want %d (the junk, vendor_balance's first, ETH_GETBALANCE)", got, junk+2)
	}
	var names []string
	for m := range st.Methods {
		names = append(names, m)
	}
	if len(names) != 3 {
		t.Errorf("status methods %v, want eth_getBalance, vendor_balance and other", names)
	}
	metrics := h.scrape()
	if !strings.Contains(metrics, `method="eth_getBalance"`) || strings.Contains(metrics, "junk_") || strings.Contains(metrics, "ETH_GETBALANCE") {
		t.Errorf("metrics: eth_getBalance labelled %v, %d junk labels, want it and none", strings.Contains(metrics, `method="eth_getBalance"`), strings.Count(metrics, `method="junk_`))
	}
}
