package jsonrpc

import "time"

// LongReadTimeout is the built-in request deadline of the reads that take
// seconds by nature: tracing, log queries, a block's receipts, a program's
// accounts. A node serves them for as long as its own HTTP server lets it
// (geth's write timeout is 30 s; archive providers run traces to a minute),
// so a client talking to it directly gets answers that a general deadline
// of a few seconds would fail.
const LongReadTimeout = 60 * time.Second

// evmLongReads and solanaLongReads are the methods LongReadTimeout applies
// to, by lower-cased name; evmLongReadPrefixes by family.
var (
	evmLongReads        = map[string]bool{"eth_getlogs": true, "eth_getfilterlogs": true, "eth_getblockreceipts": true}
	evmLongReadPrefixes = []string{"debug_trace", "trace_"}
	// Solana: the scans of every account (a program's, the largest, a
	// mint's largest holders, the supply's non-circulating ones) and an
	// epoch's rewards, which take seconds by nature; at a node slow to
	// answer them a direct client waited, and rpcdash cut them at the
	// general 10 s. Not the reads clients poll and nodes index
	// (getSignaturesForAddress, an owner's token accounts): a long read's
	// deadline also lengthens how long an answer in hand waits beside a
	// hung endpoint (a third of it, 20 s against 3.5 s).
	solanaLongReads = map[string]bool{
		"getprogramaccounts": true, "getlargestaccounts": true, "gettokenlargestaccounts": true,
		"getsupply": true, "getinflationreward": true,
	}
)

// ReceiptWaitTimeout is the built-in request deadline of the writes that
// wait for their transaction's receipt before answering (EIP-7966's
// eth_sendRawTransactionSync): the node answers once the transaction is in
// a block, an L1 block every 12 s, or at its own timeout (which the client
// may set in the call), so a general deadline of 10 s cut what a direct
// client got a receipt for, with an error saying it may have been carried
// out.
const ReceiptWaitTimeout = 60 * time.Second

// evmReceiptWaits are the methods ReceiptWaitTimeout applies to, by
// lower-cased name.
var evmReceiptWaits = map[string]bool{"eth_sendrawtransactionsync": true}

// Where a request deadline comes from (RequestTimeout).
const (
	TimeoutGeneral     = iota // server.request_timeout
	TimeoutConfigured         // methods.timeouts names the method
	TimeoutLongRead           // built in: LongReadTimeout
	TimeoutReceiptWait        // built in: ReceiptWaitTimeout
)

// RequestTimeout is the method's own request deadline and where it comes
// from: methods.timeouts, else LongReadTimeout for a long read and
// ReceiptWaitTimeout for a write that waits for its receipt; for any other
// method (TimeoutGeneral) the caller's general deadline applies.
func (t *MethodTable) RequestTimeout(method string) (time.Duration, int) {
	if d, ok := LookupFold(t.timeouts, method); ok {
		return d, TimeoutConfigured
	}
	if t.longRead(method) {
		return LongReadTimeout, TimeoutLongRead
	}
	if !t.solana {
		if _, ok := LookupFold(evmReceiptWaits, method); ok {
			return ReceiptWaitTimeout, TimeoutReceiptWait
		}
	}
	return 0, TimeoutGeneral
}

func (t *MethodTable) longRead(method string) bool {
	if t.solana {
		_, ok := LookupFold(solanaLongReads, method)
		return ok
	}
	if _, ok := LookupFold(evmLongReads, method); ok {
		return true
	}
	for _, p := range evmLongReadPrefixes {
		if hasPrefixFold(method, p) {
			return true
		}
	}
	return false
}
