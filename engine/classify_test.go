package engine

import (
	"encoding/json"
	"testing"
)

// The table of rpcerrors.go, as the README documents it.
func TestBlame_RequestsOwnErrorsVersusTheEndpoints(t *testing.T) {
	tests := []struct {
		solana  bool
		code    int
		message string
		want    blame
	}{
		// EVM: the request's own
		{false, 3, "execution reverted", blameRequest},
		{false, 3, "execution reverted: rate limit per user", blameRequest}, // a contract's text is not the provider's
		{false, -32000, "execution reverted", blameRequest},
		{false, -32000, "nonce too low: next nonce 5, tx nonce 4", blameRequest},
		{false, -32000, "insufficient funds for gas * price + value", blameRequest},
		{false, -32000, "replacement transaction underpriced", blameRequest},
		{false, -32000, "already known", blameRequest},
		{false, -32000, "out of gas", blameRequest},
		{false, -32602, "invalid argument 0: hex string has length 3", blameRequest},
		{false, -32600, "invalid request", blameRequest},
		{false, -32000, "filter not found", blameRequest},
		{false, -32000, "some other server error", blameRequest},
		{false, 7, "application error", blameRequest},
		// EVM: the endpoint's
		{false, -32603, "internal error", blameEndpoint},
		{false, -32603, "missing trie node", blameEndpoint},
		{false, -32000, "missing trie node 1a2b (path ) state 0x… is not available", blameEndpoint},
		{false, -32000, "header not found", blameEndpoint},
		{false, -32000, "required historical state unavailable", blameEndpoint},
		{false, -32000, "execution aborted (timeout = 5s)", blameEndpoint},
		{false, -32002, "resource unavailable", blameEndpoint},
		{false, -32001, "Unauthorized: invalid API key", blameEndpoint},
		{false, -32603, "", blameEndpoint},
		// EVM: this endpoint cannot serve it
		{false, -32601, "the method debug_traceTransaction does not exist/is not available", blameUnsupported},
		{false, -32004, "method not supported", blameUnsupported},
		{false, -32005, "query returned more than 10000 results", blameUnsupported},
		{false, -32000, "block range is too large", blameUnsupported},
		// EVM: rate limits in the body
		{false, -32005, "daily request count exceeded, request rate limited", blameRateLimit},
		{false, -32016, "Your app has exceeded its compute units per second capacity", blameRateLimit},
		{false, 429, "Too Many Requests", blameRateLimit},
		{false, -32000, "too many requests", blameRateLimit},
		// Solana
		{true, -32002, "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1 (timeout)", blameRequest},
		{true, -32003, "Transaction signature verification failure", blameRequest},
		{true, -32007, "Slot 100 was skipped, or missing due to ledger jump to recent snapshot", blameRequest},
		{true, -32009, "Slot 100 was skipped, or missing in long-term storage", blameRequest},
		{true, -32015, "Transaction version (0) is not supported", blameRequest},
		{true, -32602, "Invalid param: WrongSize", blameRequest},
		{true, -32005, "Node is unhealthy", blameEndpoint},
		{true, -32005, "Node is behind by 42 slots", blameEndpoint},
		{true, -32016, "Minimum context slot has not been reached", blameEndpoint},
		{true, -32014, "Block status not yet available for slot 100", blameEndpoint},
		{true, -32004, "Block not available for slot 100", blameEndpoint},
		{true, -32603, "Internal error", blameEndpoint},
		{true, -32001, "Block 100 cleaned up, does not exist on node. First available block: 200", blameUnsupported},
		{true, -32011, "Transaction history is not available from this node", blameUnsupported},
		{true, -32010, "key excluded from account secondary indexes", blameUnsupported},
		{true, -32601, "Method not found", blameUnsupported},
		{true, -32429, "rate limit exceeded", blameRateLimit},
	}
	for _, tt := range tests {
		if got := blameOf(tt.solana, tt.code, tt.message); got != tt.want {
			t.Errorf("solana=%v %d %q: %s, want %s", tt.solana, tt.code, tt.message, got, tt.want)
		}
	}
}

func TestClassify_StatusIDAndErrors(t *testing.T) {
	cfg := Default()
	cfg.Endpoints = []EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	e, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	req := NewRequest(json.RawMessage(`1`), "eth_getBalance", json.RawMessage(`["0xaa","latest"]`))
	strReq := NewRequest(json.RawMessage(`"a\u0062c"`), "eth_getBalance", nil)
	note := NewRequest(nil, "eth_getBalance", nil)
	tests := []struct {
		name   string
		req    *Request
		status int
		body   string
		want   outcome
	}{
		{"result", req, 200, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`, outAnswer},
		{"same number spelled otherwise", req, 200, `{"jsonrpc":"2.0","id":1.0,"result":"0x1"}`, outAnswer},
		{"same string escaped otherwise", strReq, 200, `{"jsonrpc":"2.0","id":"abc","result":"0x1"}`, outAnswer},
		{"foreign id", req, 200, `{"jsonrpc":"2.0","id":2,"result":"0x1"}`, outInvalid},
		{"id as a string", req, 200, `{"jsonrpc":"2.0","id":"1","result":"0x1"}`, outInvalid},
		{"no id", req, 200, `{"jsonrpc":"2.0","result":"0x1"}`, outInvalid},
		{"null id error", req, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`, outInvalid},
		{"null id rate limit", req, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"rate limited"}}`, outRateLimit},
		{"batch to a single request", req, 200, `[{"jsonrpc":"2.0","id":1,"result":"0x1"}]`, outInvalid},
		{"not JSON-RPC", req, 200, `<html>hi</html>`, outInvalid},
		{"redirect with a result", req, 302, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`, outHTTPError},
		{"400 with a result", req, 400, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`, outHTTPError},
		{"400 with the request's own error", req, 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params"}}`, outAnswer},
		{"401 with the endpoint's error", req, 401, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"unauthorized"}}`, outHTTPError},
		{"404 page", req, 404, `not found`, outHTTPError},
		{"500", req, 500, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`, outHTTPError},
		{"429", req, 429, ``, outRateLimit},
		{"revert", req, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"execution reverted","data":"0x08c3"}}`, outAnswer},
		{"missing trie node", req, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"missing trie node"}}`, outEndpointError},
		{"method not found", req, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`, outUnsupported},
		{"rate limit in the body", req, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"daily request count exceeded"}}`, outRateLimit},
		{"notification", note, 200, ``, outAnswer},
		{"notification, 204", note, 204, ``, outAnswer},
	}
	for _, tt := range tests {
		r := upstreamReply{body: getBuf()}
		r.body.WriteString(tt.body)
		e.classify(&r, tt.status, "", tt.req)
		if r.out != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.name, r.out, r.cause, tt.want)
		}
		putBuf(r.body)
	}
}
