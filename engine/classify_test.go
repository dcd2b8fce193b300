package engine

import (
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// The table of rpcerrors.go, as the README documents it.
func TestClassify_StatusIDAndErrors(t *testing.T) {
	e, _ := clockedEngine(t, 1, nil)
	req := jsonrpc.NewRequest(json.RawMessage(`1`), "eth_getBalance", json.RawMessage(`["0xaa","latest"]`))
	strReq := jsonrpc.NewRequest(json.RawMessage(`"a\u0062c"`), "eth_getBalance", nil)
	note := jsonrpc.NewRequest(nil, "eth_getBalance", nil)
	tests := []struct {
		name   string
		req    *jsonrpc.Request
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
		// JSON-RPC 2.0's answer to a request whose id could not be read
		// (reth reads no id 1.5): the request's error, relayed.
		{"null id invalid request", req, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}`, outUnsupported},
		{"null id parse error", req, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, outUnsupported},
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
		// An answer without the "jsonrpc" member, as some providers and
		// nodes give it: viem and ethers take it, so it is judged as any
		// other. One naming another version is not JSON-RPC 2.0.
		{"no version", req, 200, `{"id":1,"result":"0x1"}`, outAnswer},
		{"no version, revert", req, 200, `{"id":1,"error":{"code":3,"message":"execution reverted","data":"0x08c3"}}`, outAnswer},
		{"no version, missing trie node", req, 200, `{"id":1,"error":{"code":-32603,"message":"missing trie node"}}`, outEndpointError},
		{"no version, foreign id", req, 200, `{"id":2,"result":"0x1"}`, outInvalid},
		{"no version, no id", req, 200, `{"result":"0x1"}`, outInvalid},
		{"no version, no result", req, 200, `{"id":1}`, outInvalid},
		{"no version, 400 with the request's own error", req, 400, `{"id":1,"error":{"code":-32602,"message":"invalid params"}}`, outAnswer},
		{"no version, null id rate limit", req, 200, `{"id":null,"error":{"code":-32005,"message":"rate limited"}}`, outRateLimit},
		{"no version nor id, 403 with a provider's error", req, 403, `{"error":{"code":"forbidden","message":"plan does not include archive data"}}`, outHTTPError},
		{"version 1.0", req, 200, `{"jsonrpc":"1.0","id":1,"result":"0x1"}`, outInvalid},
		{"version null", req, 200, `{"jsonrpc":null,"id":1,"result":"0x1"}`, outInvalid},
		{"version number", req, 200, `{"jsonrpc":2,"id":1,"result":"0x1"}`, outInvalid},
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

// A dial that gets no answer in time is silence (unreachable), not a
// refusal; a refused one is not silence.
func TestClassify_DialTimeoutIsUnreachableNotRefused(t *testing.T) {
	_, err := (&net.Dialer{Timeout: time.Nanosecond}).Dial("tcp", "127.0.0.1:1")
	if err == nil || !dialTimedOut(err) || refusedConn(err) {
		t.Fatalf("dial past its timeout: %v; unreachable %v, refused %v", err, dialTimedOut(err), refusedConn(err))
	}
	_, err = net.Dial("tcp", "127.0.0.1:1")
	if err == nil || dialTimedOut(err) || !refusedConn(err) {
		t.Fatalf("refused dial: %v; unreachable %v, refused %v", err, dialTimedOut(err), refusedConn(err))
	}
}
