package jsonrpc

import "strings"

// Blame says whose fault a JSON-RPC error answer is. The same code means
// different things on different chains and providers (geth answers both
// "nonce too low" and "missing trie node" with -32000), so the message is
// read first and the code decides only when no known message matches —
// except for errors whose message carries the caller's own text (a revert
// reason, a program's log), which are the request's whatever they say.
type Blame uint8

const (
	// blameRequest: the request's own error (a revert, invalid params, a
	// nonce too low). Relayed unchanged; the endpoint is healthy.
	BlameRequest Blame = iota
	// blameEndpoint: the endpoint's fault (internal error, missing state,
	// a node behind or unhealthy). Counted against it; reads fail over.
	BlameEndpoint
	// blameUnsupported: this endpoint cannot serve this request (method not
	// enabled, history pruned, a provider's own size limit), which another
	// may. Reads fail over; nothing is counted against the endpoint.
	BlameUnsupported
	// blameRateLimit: a rate limit or capacity message in the body: backed
	// off like HTTP 429.
	BlameRateLimit
	// BlameNotYet: the endpoint does not have the block or slot the
	// request names ("header not found", "block range extends beyond
	// current head block", Solana's "block not available for slot").
	// Whose that is depends on the block: the engine decides (notyet_error.go).
	BlameNotYet
)

func (b Blame) String() string {
	return [...]string{"request", "endpoint", "unsupported", "rate_limit", "not_yet"}[b]
}

// Messages, matched case-insensitively as substrings, in this order: the
// first list that matches decides.
var (
	rateLimitMessages = []string{
		"rate limit", "rate-limit", "ratelimit", "too many requests", "requests per second",
		"request rate", "capacity", "compute units", "daily request count", "quota",
		"throughput", "server is busy", "overloaded", "try again later",
		"request limit", "credits", // QuickNode's "100/second request limit reached", a plan's credits spent
	}
	notYetMessages = []string{
		"header not found", "unknown block", "block not found", "beyond current head",
		"after last accepted block",
	}
	endpointMessages = []string{
		"missing trie node", "historical state", "state is not available", "state not available", "pruned",
		"node is syncing", "not synced", "no suitable peers", "internal error",
		"internal server error", "timeout", "timed out", "deadline exceeded",
		"service unavailable", "bad gateway", "upstream", "backend",
		"unauthorized", "forbidden", "api key", "access denied",
	}
	// A provider's own limits on a query's size, which another provider
	// may not have. A bare "block range" is not one: geth's "invalid block
	// range params" is the request's, "block range extends beyond current
	// head block" a block not there yet.
	unsupportedMessages = []string{
		"method not found", "does not exist/is not available", "not supported",
		"method not available", "not enabled",
		"query returned more than",            // Infura: query returned more than 10000 results
		"log response size exceeded",          // Alchemy
		"requests with up to a",               // Alchemy: eth_getLogs requests with up to a 2K block range
		"is limited to a",                     // QuickNode: eth_getLogs is limited to a 10,000 range
		"range is too wide", "range too wide", // Ankr and others
		"range is too large", "range too large",
		"exceed maximum block range", // geth's own logs range cap
		"exceeds max", "max block range", "maximum block range", "block range limit",
	}
	requestMessages = []string{
		"out of gas", "gas required exceeds", "insufficient funds",
		"nonce too low", "nonce too high", "already known", "underpriced", "intrinsic gas too low",
		"exceeds block gas limit", "less than block base fee", "higher than max fee per gas",
		"invalid sender", "invalid argument", "invalid params", "invalid block range", "cannot unmarshal",
		"invalid opcode", "stack underflow", "stack overflow", "invalid jump", "filter not found",
	}
)

// Codes, when no message matched. Codes in neither table are the request's.
var (
	// Errors that quote the contract's or program's own text.
	evmUserTextCodes    = map[int]bool{3: true}
	solanaUserTextCodes = map[int]bool{-32002: true, -32003: true, -32006: true, -32013: true, -32015: true}

	evmCodes = map[int]Blame{
		3:      BlameRequest,     // execution reverted (with data)
		-32700: BlameRequest,     // parse error
		-32600: BlameRequest,     // invalid request
		-32602: BlameRequest,     // invalid params
		-32601: BlameUnsupported, // method not found
		-32603: BlameEndpoint,    // internal error
		-32002: BlameEndpoint,    // EIP-1474 resource unavailable
		-32003: BlameRequest,     // EIP-1474 transaction rejected
		-32004: BlameUnsupported, // EIP-1474 method not supported
		-32005: BlameUnsupported, // EIP-1474 limit exceeded (a provider's limit; another may allow it)
		-32006: BlameEndpoint,    // EIP-1474 JSON-RPC version not supported
		429:    BlameRateLimit,   // some providers put the HTTP status in the code
	}
	solanaCodes = map[int]Blame{
		-32700: BlameRequest,
		-32600: BlameRequest,
		-32602: BlameRequest,
		-32601: BlameUnsupported,
		-32603: BlameEndpoint,
		-32001: BlameUnsupported, // block cleaned up: this node's history does not reach it
		-32002: BlameRequest,     // transaction preflight (simulation) failed
		-32003: BlameRequest,     // signature verification failed
		-32004: BlameNotYet,      // block not available for slot
		-32005: BlameEndpoint,    // node unhealthy
		-32006: BlameRequest,     // precompile verification failed
		-32007: BlameRequest,     // slot skipped
		-32008: BlameEndpoint,    // no snapshot
		-32009: BlameRequest,     // slot skipped in long-term storage
		-32010: BlameUnsupported, // key excluded from secondary indexes on this node
		-32011: BlameUnsupported, // transaction history not available on this node
		-32012: BlameEndpoint,    // scan error
		-32013: BlameRequest,     // signature length mismatch
		-32014: BlameNotYet,      // block status not yet available
		-32015: BlameRequest,     // unsupported transaction version
		-32016: BlameNotYet,      // minimum context slot not reached
		-32017: BlameUnsupported, // epoch rewards period active
		-32018: BlameRequest,     // slot not an epoch boundary
		-32019: BlameEndpoint,    // long-term storage unreachable
		429:    BlameRateLimit,
	}
)

// maxMatchedMessage bounds how much of an upstream's message is read.
const maxMatchedMessage = 512

// BlameOf classifies a JSON-RPC error answer of an endpoint of the given
// chain kind.
func BlameOf(solana bool, code int, message string) Blame {
	if len(message) > maxMatchedMessage {
		message = message[:maxMatchedMessage]
	}
	userText, codes := evmUserTextCodes, evmCodes
	if solana {
		userText, codes = solanaUserTextCodes, solanaCodes
	}
	m := strings.ToLower(message)
	if userText[code] || strings.Contains(m, "revert") {
		return BlameRequest
	}
	for _, l := range []struct {
		words []string
		b     Blame
	}{{rateLimitMessages, BlameRateLimit}, {notYetMessages, BlameNotYet}, {endpointMessages, BlameEndpoint}, {unsupportedMessages, BlameUnsupported}, {requestMessages, BlameRequest}} {
		for _, w := range l.words {
			if strings.Contains(m, w) {
				return l.b
			}
		}
	}
	if b, ok := codes[code]; ok {
		return b
	}
	return BlameRequest
}
