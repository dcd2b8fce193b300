package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Reads that must see the client's own recent writes (read-your-writes):
// right after a transaction is sent, only the endpoint that took it is sure
// to have it in its mempool. Another endpoint learns of it by gossip, late,
// or never (a private mempool), and answers these reads as if it had not
// been sent: the old pending nonce, a null transaction.

// SetsWriteAffinity says whether a successful answer to method is a write
// the reads of its sender should follow: a method the write tables list
// (built in or methods.writes). A method in no table is sent once like a
// write, but says nothing of what it did.
func (t *MethodTable) SetsWriteAffinity(method string) bool {
	c, ok := LookupFold(t.classes, method)
	return ok && c == ClassWrite
}

// ReadsPending says whether a read's answer depends on the endpoint's
// pending state (its mempool): an EVM read naming the "pending" block tag
// (eth_getTransactionCount, eth_getBlockByNumber, eth_call, eth_getLogs'
// fromBlock or toBlock …), eth_pendingTransactions, eth_fillTransaction
// (geth fills the nonce from the pending state; viem signs with it) and
// the txpool_ methods. An absent tag is not "pending": nodes read "latest"
// then.
func (t *MethodTable) ReadsPending(method string, params json.RawMessage) bool {
	if t.solana {
		return false
	}
	if strings.EqualFold(method, "eth_pendingTransactions") || strings.EqualFold(method, "eth_fillTransaction") ||
		len(method) > 7 && strings.EqualFold(method[:7], "txpool_") {
		return true
	}
	if !bytes.Contains(params, pendingBytes) {
		return false // most reads: a scan, not a parse
	}
	kind, arg, known := t.tipArg(method, params, false)
	switch {
	case !known || len(arg) == 0:
		return false
	case kind == tipBlock:
		return pendingTag(arg)
	case kind == tipLogs:
		return arg[0] == '{' && (memberIs(arg, `"fromBlock"`, pendingTag) || memberIs(arg, `"toBlock"`, pendingTag))
	}
	return false
}

var pendingBytes = []byte(`"pending"`)

// pendingTag: the block tag "pending", or EIP-1898 {"blockNumber": "pending"}.
func pendingTag(v []byte) bool {
	switch {
	case bytes.Equal(v, pendingBytes):
		return true
	case len(v) > 0 && v[0] == '{':
		return memberIs(v, `"blockNumber"`, pendingTag)
	}
	return false
}

// memberIs says whether obj's member key satisfies is.
func memberIs(obj []byte, key string, is func([]byte) bool) bool {
	for it := (memberIter{b: obj, i: 1}); it.next(); {
		if string(obj[it.ks:it.ke]) == key {
			return is(obj[it.vs:it.ve])
		}
	}
	return false
}

// txLookups are the reads of one transaction by the hash (EVM) or the
// signature (Solana) its sending answered, in params[0]; sigList: params[0]
// is a list of them (getSignatureStatuses).
var (
	evmTxLookups    = map[string]bool{"eth_gettransactionbyhash": false, "eth_gettransactionreceipt": false, "eth_getrawtransactionbyhash": false}
	solanaTxLookups = map[string]bool{"gettransaction": false, "getsignaturestatuses": true}
)

// MaxTxRef is the longest transaction hash or signature kept or looked up
// (an EVM hash is 66 bytes, a Solana signature at most 88).
const MaxTxRef = 128

// TxRefs gives each transaction hash or signature a read looks up, in
// their key form (TxRef), to each until it returns false; false when the
// read looks up none (another method, params not a list of strings).
func (t *MethodTable) TxRefs(method string, params json.RawMessage, each func(ref string) bool) bool {
	lookups := evmTxLookups
	if t.solana {
		lookups = solanaTxLookups
	}
	list, ok := LookupFold(lookups, method)
	if !ok {
		return false
	}
	arg := paramAt(TrimSpace(params), 0)
	if !list {
		ref, ok := t.txRef(arg)
		if ok {
			each(ref)
		}
		return ok
	}
	if len(arg) == 0 || arg[0] != '[' {
		return false
	}
	n := 0
	for it := (arrayIter{b: arg, i: 1}); it.next(); n++ {
		ref, ok := t.txRef(arg[it.vs:it.ve])
		if !ok {
			return false
		}
		if !each(ref) {
			return true
		}
	}
	return n > 0
}

func (t *MethodTable) txRef(v []byte) (string, bool) {
	if len(v) > MaxTxRef+2 {
		return "", false
	}
	s, ok := decodeString(v)
	if !ok || s == "" {
		return "", false
	}
	return t.TxRef(s), true
}

// TxRef is a write's answer as a key for TxRefs: EVM hashes lower-cased
// (hex is case-blind), Solana signatures as they are (base58 is not).
func (t *MethodTable) TxRef(s string) string {
	if t.solana {
		return s
	}
	return Lower(s)
}
