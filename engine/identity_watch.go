package engine

// The chain identity clients' requests reveal, passed to whoever judges the
// pool's chain (the probes, probes/identity.go).

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// identityWatch is who is told of the answers to the chain's identity
// method (eth_chainId, getGenesisHash). An endpoint moved to another chain
// was found out only at its next identity probe, every 12th round (up to a
// minute at the default interval), while clients were handed the other
// chain's id (15 of 47 eth_chainId answers in an audit) and its data.
type identityWatch struct {
	method string
	seen   func(endpoint string, body []byte)
}

// WatchIdentity has every answer an endpoint gives a client's request for
// method passed to seen, with the endpoint's name, before it is relayed.
// seen may take the endpoint out (Exclude with ExcludeWrongChain): the
// answer is then not relayed, and the read fails over (offChain).
func (e *Engine) WatchIdentity(method string, seen func(endpoint string, body []byte)) {
	e.identity.Store(&identityWatch{method: method, seen: seen})
}

// identitySeen passes ep's answer to req to the identity watch, when req
// asks the identity method.
func (e *Engine) identitySeen(ep *endpoint, req *jsonrpc.Request, body []byte) {
	if w := e.identity.Load(); w != nil && req.Method == w.method {
		w.seen(ep.Name, body)
	}
}
