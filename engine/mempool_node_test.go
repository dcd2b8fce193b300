package engine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mempoolNode is a node with a mempool of its own on a real loopback port,
// for one sender: it knows the transactions sent to it and none sent to
// another node (no gossip, as a private-mempool provider), so its pending
// nonce and its transaction lookups say which node took a write. The sim
// has no mempool.
//
// A raw transaction is rawTx(nonce); its hash is the same on every node.
// EVM: eth_sendRawTransaction, eth_getTransactionCount (latest: 0 mined;
// pending: the nonces it holds without a gap), eth_getTransactionByHash,
// eth_getBlockByNumber("pending"), eth_getBalance, eth_chainId. Solana:
// sendTransaction, getSignatureStatuses, getTransaction.
type mempoolNode struct {
	name string
	srv  *httptest.Server
	// readDelay is added to every read's answer, writeDelay to every
	// write's (nanoseconds).
	readDelay, writeDelay atomic.Int64

	mu     sync.Mutex
	nonces map[int]string // nonce → hash of the transaction it holds
	hashes map[string]int // hash → nonce
	calls  map[string]int // by method
	taken  []int          // the nonces it took, in the order they came
}

func newMempoolNode(t *testing.T, name string) *mempoolNode {
	n := &mempoolNode{name: name, nonces: map[int]string{}, hashes: map[string]int{}, calls: map[string]int{}}
	n.srv = httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(n.srv.Close)
	return n
}

func rawTx(nonce int) string { return fmt.Sprintf("0x%064x", nonce) }

func txHash(raw string) string {
	d := sha256.Sum256([]byte(raw))
	return "0x" + hex.EncodeToString(d[:])
}

// pendingNonce is the next nonce after those it holds without a gap.
func (n *mempoolNode) pendingNonce() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for n.nonces[k] != "" {
		k++
	}
	return k
}

func (n *mempoolNode) count(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[method]
}

func (n *mempoolNode) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	str := func(i int) string {
		var s string
		if i < len(req.Params) {
			json.Unmarshal(req.Params[i], &s)
		}
		return s
	}
	write := req.Method == "eth_sendRawTransaction" || req.Method == "sendTransaction"
	delay := &n.readDelay
	if write {
		delay = &n.writeDelay
	}
	if d := time.Duration(delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	n.mu.Lock()
	n.calls[req.Method]++
	var result any
	var rpcErr *nodeError
	switch req.Method {
	case "eth_sendRawTransaction", "sendTransaction":
		raw := str(0)
		nonce, err := strconv.ParseInt(raw[2:], 16, 64)
		h := txHash(raw)
		switch {
		case err != nil:
			rpcErr = &nodeError{-32602, "invalid transaction"}
		case n.nonces[int(nonce)] != "":
			msg := "replacement transaction underpriced"
			if n.nonces[int(nonce)] == h {
				msg = "already known"
			}
			rpcErr = &nodeError{-32000, msg}
		default:
			n.nonces[int(nonce)], n.hashes[h] = h, int(nonce)
			n.taken = append(n.taken, int(nonce))
			result = h
			if req.Method == "sendTransaction" {
				result = solanaSig(h)
			}
		}
	case "eth_getTransactionCount":
		k := 0
		if str(1) == "pending" {
			for n.nonces[k] != "" {
				k++
			}
		}
		result = "0x" + strconv.FormatInt(int64(k), 16)
	case "eth_getTransactionByHash":
		if nonce, ok := n.hashes[str(0)]; ok {
			result = map[string]any{"hash": str(0), "nonce": "0x" + strconv.FormatInt(int64(nonce), 16), "blockNumber": nil}
		}
	case "eth_getBlockByNumber":
		txs := []string{}
		for k := 0; n.nonces[k] != ""; k++ {
			txs = append(txs, n.nonces[k])
		}
		result = map[string]any{"number": "0x1", "transactions": txs}
	case "getSignatureStatuses":
		var sigs []string
		if len(req.Params) > 0 {
			json.Unmarshal(req.Params[0], &sigs)
		}
		value := make([]any, len(sigs))
		for i, s := range sigs {
			if n.holdsSig(s) {
				value[i] = map[string]any{"slot": 1, "confirmations": 0, "err": nil, "confirmationStatus": "processed"}
			}
		}
		result = map[string]any{"context": map[string]any{"slot": 1}, "value": value}
	case "getTransaction":
		if n.holdsSig(str(0)) {
			result = map[string]any{"slot": 1}
		}
	case "eth_getBalance":
		result = "0x0"
	case "eth_chainId":
		result = "0x1"
	case "getBalance":
		result = map[string]any{"context": map[string]any{"slot": 1}, "value": 0}
	default:
		rpcErr = &nodeError{-32601, "the method " + req.Method + " does not exist/is not available"}
	}
	n.mu.Unlock()
	out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rpcErr != nil {
		out["error"] = rpcErr
	} else {
		out["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

type nodeError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// solanaSig stands for a transaction's signature: base58 is case-sensitive,
// so it mixes cases.
func solanaSig(hash string) string { return "Sig" + hash[2:34] + "XyZ" }

// holdsSig (n.mu held) says whether n took the transaction signed sig.
func (n *mempoolNode) holdsSig(sig string) bool {
	for h := range n.hashes {
		if solanaSig(h) == sig {
			return true
		}
	}
	return false
}

// takenNonces are the nonces n took, in the order they came.
func (n *mempoolNode) takenNonces() []int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.taken)
}
