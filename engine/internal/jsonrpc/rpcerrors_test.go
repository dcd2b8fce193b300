package jsonrpc

import "testing"

func TestBlame_RequestsOwnErrorsVersusTheEndpoints(t *testing.T) {
	tests := []struct {
		solana  bool
		code    int
		message string
		want    Blame
	}{
		// EVM: the request's own
		{false, 3, "execution reverted", BlameRequest},
		{false, 3, "execution reverted: rate limit per user", BlameRequest}, // a contract's text is not the provider's
		{false, -32000, "execution reverted", BlameRequest},
		{false, -32000, "nonce too low: next nonce 5, tx nonce 4", BlameRequest},
		{false, -32000, "insufficient funds for gas * price + value", BlameRequest},
		{false, -32000, "replacement transaction underpriced", BlameRequest},
		{false, -32000, "already known", BlameRequest},
		{false, -32000, "out of gas", BlameRequest},
		{false, -32602, "invalid argument 0: hex string has length 3", BlameRequest},
		{false, -32600, "invalid request", BlameRequest},
		{false, -32000, "filter not found", BlameRequest},
		{false, -32000, "some other server error", BlameRequest},
		{false, 7, "application error", BlameRequest},
		// EVM: the endpoint's
		{false, -32603, "internal error", BlameEndpoint},
		{false, -32603, "missing trie node", BlameEndpoint},
		{false, -32000, "missing trie node 1a2b (path ) state 0x… is not available", BlameEndpoint},
		{false, -32000, "required historical state unavailable", BlameEndpoint},
		{false, -32000, "execution aborted (timeout = 5s)", BlameEndpoint},
		{false, -32002, "resource unavailable", BlameEndpoint},
		{false, -32001, "Unauthorized: invalid API key", BlameEndpoint},
		{false, -32603, "", BlameEndpoint},
		// EVM: this endpoint cannot serve it
		{false, -32601, "the method debug_traceTransaction does not exist/is not available", BlameUnsupported},
		{false, -32004, "method not supported", BlameUnsupported},
		{false, -32005, "query returned more than 10000 results", BlameUnsupported},
		{false, -32000, "block range is too large", BlameUnsupported},
		// Providers' own range and size limits: another provider may allow it
		{false, -32602, "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response.", BlameUnsupported},
		{false, -32600, "Under the Free tier plan, you can make eth_getLogs requests with up to a 10 block range.", BlameUnsupported},
		{false, -32614, "eth_getLogs is limited to a 10,000 range", BlameUnsupported},
		{false, -32062, "block range is too wide", BlameUnsupported},
		{false, -32000, "block range too large", BlameUnsupported},
		{false, -32000, "exceed maximum block range: 10000", BlameUnsupported},
		{false, -32005, "query exceeds max block range 1000", BlameUnsupported},
		{false, -32005, "query returned more than 10000 results. Try with this block range [0x1, 0x2].", BlameUnsupported},
		// EVM: a malformed range is the request's
		{false, -32602, "invalid block range params", BlameRequest},
		{false, -32000, "invalid block range params", BlameRequest},
		// EVM: a block the endpoint does not have (yet): the engine decides by the block
		{false, -32000, "header not found", BlameNotYet},
		{false, -32000, "unknown block", BlameNotYet},
		{false, -32602, "block range extends beyond current head block", BlameNotYet},
		{false, -32000, "requested block 1234 after last accepted block 1200", BlameNotYet},
		// EVM: rate limits in the body
		{false, -32005, "daily request count exceeded, request rate limited", BlameRateLimit},
		{false, -32016, "Your app has exceeded its compute units per second capacity", BlameRateLimit},
		{false, 429, "Too Many Requests", BlameRateLimit},
		{false, -32000, "too many requests", BlameRateLimit},
		// QuickNode's, sometimes with HTTP 200: read as the request's before
		{false, -32007, "100/second request limit reached - reduce calls per second or upgrade your account at quicknode.com", BlameRateLimit},
		{true, -32007, "100/second request limit reached - reduce calls per second or upgrade your account at quicknode.com", BlameRateLimit},
		{false, -32000, "exceeded the monthly credits of your plan", BlameRateLimit},
		// Solana
		{true, -32002, "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1 (timeout)", BlameRequest},
		{true, -32003, "Transaction signature verification failure", BlameRequest},
		{true, -32007, "Slot 100 was skipped, or missing due to ledger jump to recent snapshot", BlameRequest},
		{true, -32009, "Slot 100 was skipped, or missing in long-term storage", BlameRequest},
		{true, -32015, "Transaction version (0) is not supported", BlameRequest},
		{true, -32602, "Invalid param: WrongSize", BlameRequest},
		{true, -32005, "Node is unhealthy", BlameEndpoint},
		{true, -32005, "Node is behind by 42 slots", BlameEndpoint},
		{true, -32016, "Minimum context slot has not been reached", BlameNotYet},
		{true, -32014, "Block status not yet available for slot 100", BlameNotYet},
		{true, -32004, "Block not available for slot 100", BlameNotYet},
		{true, -32603, "Internal error", BlameEndpoint},
		{true, -32001, "Block 100 cleaned up, does not exist on node. First available block: 200", BlameUnsupported},
		{true, -32011, "Transaction history is not available from this node", BlameUnsupported},
		{true, -32010, "key excluded from account secondary indexes", BlameUnsupported},
		{true, -32601, "Method not found", BlameUnsupported},
		{true, -32429, "rate limit exceeded", BlameRateLimit},
	}
	for _, tt := range tests {
		if got := BlameOf(tt.solana, tt.code, tt.message); got != tt.want {
			t.Errorf("solana=%v %d %q: %s, want %s", tt.solana, tt.code, tt.message, got, tt.want)
		}
	}
}
