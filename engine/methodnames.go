package engine

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// Method names come from clients, so per-method state and metrics labels
// are capped (maxTrackedMethods). The slots went to the first names seen,
// whatever they were: 128 junk names (junk_1, junk_2 …, each answered
// -32601 method not found) took them for good, and every method seen
// after them, eth_getBalance too, was counted as otherMethod until
// restart, its hedging off. A name takes a slot only once it is known to
// exist: listed in a method table as it is spelt there, or answered by an
// endpoint as a method it has (proven).

// methodNames says which name each client method is counted under.
type methodNames struct {
	table *jsonrpc.MethodTable
	mu    sync.Mutex // taken to add a proven name
	// proven are the names no table lists that an endpoint answered as
	// methods it has, at most maxTrackedMethods: copied on write (a name
	// is added once), read without a lock on every request.
	proven atomic.Pointer[map[string]struct{}]
}

func newMethodNames(table *jsonrpc.MethodTable) *methodNames {
	n := &methodNames{table: table}
	n.proven.Store(&map[string]struct{}{})
	return n
}

// statsName is the name a client's method is counted under: itself once
// it is known to exist, otherMethod until then and for a name that is no
// method name (control characters, 10 KB long …).
func (n *methodNames) statsName(m string) string {
	if n.exists(m) && isMethodName(m) {
		return m
	}
	return otherMethod
}

func (n *methodNames) exists(m string) bool {
	if n.table.Listed(m) {
		return true
	}
	_, ok := (*n.proven.Load())[m]
	return ok
}

// answered notes an endpoint's answer to method relayed as the request's
// own (info): a result, or an error of the request's. Any such answer
// proves the method exists, except method not found or not supported and
// invalid request (a provider's "unsupported method" comes as -32600) or
// a parse error.
func (n *methodNames) answered(method string, info jsonrpc.ResponseInfo) {
	if info.HasError {
		switch info.ErrCode {
		case jsonrpc.CodeMethodNotFound, jsonrpc.CodeMethodNotSupported, jsonrpc.CodeInvalidRequest, jsonrpc.CodeParseError:
			return
		}
	}
	if n.exists(method) || !isMethodName(method) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	old := *n.proven.Load()
	if _, ok := old[method]; ok || len(old) >= maxTrackedMethods {
		return
	}
	next := maps.Clone(old)
	next[method] = struct{}{}
	n.proven.Store(&next)
}
