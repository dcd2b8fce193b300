package jsonrpc

import "testing"

func TestWithID_ReplacesTheIDKeepingTheRest(t *testing.T) {
	body, perr := ParseBody([]byte(`{"jsonrpc":"2.0", "id" : 1.0,"method":"eth_call","params":[{"to":"0x1"},"latest"],"x":"id"}`))
	if perr != nil {
		t.Fatal(perr)
	}
	req := body.Elements[0].Req
	if got := string(req.RawWithID([]byte(`"rpcdash-3"`))); got != `{"jsonrpc":"2.0", "id" : "rpcdash-3","method":"eth_call","params":[{"to":"0x1"},"latest"],"x":"id"}` {
		t.Errorf("RawWithID: %s", got)
	}
	if got := string(WithResponseID([]byte(` {"jsonrpc":"2.0","id":"rpcdash-3","result":{"id":7}}`), req.ID)); got != `{"jsonrpc":"2.0","id":1.0,"result":{"id":7}}` {
		t.Errorf("WithResponseID: %s", got)
	}
}
