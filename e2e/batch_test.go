package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// TestBatch_MixedKnownAndUnknownMethodsKeepOrder sends a batch in which
// geth knows every method but getHealth: each element gets geth's own
// answer, in order, and the unknown one geth's own -32601 error.
func TestBatch_MixedKnownAndUnknownMethodsKeepOrder(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.rpcdash.drain("simA")

	batch := fmt.Sprintf(`[`+
		`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},`+
		`{"jsonrpc":"2.0","id":"health","method":"getHealth"},`+
		`{"jsonrpc":"2.0","id":3,"method":"eth_getBalance","params":["%s","latest"]},`+
		`{"jsonrpc":"2.0","id":4,"method":"eth_blockNumber"},`+
		`{"jsonrpc":"2.0","id":5,"method":"getHealth","params":[]}`+
		`]`, devAddr)
	want := mustPost(t, s.geth.URL(), batch)
	got := mustPost(t, s.rpcdash.URL(), batch)
	answeredBy(t, "geth", got.Header)

	var wantEls, gotEls []json.RawMessage
	if err := json.Unmarshal(want.Body, &wantEls); err != nil {
		t.Fatalf("geth's batch answer %s: %v", want.Body, err)
	}
	if err := json.Unmarshal(got.Body, &gotEls); err != nil {
		t.Fatalf("rpcdash's batch answer %s: %v", got.Body, err)
	}
	if len(gotEls) != len(wantEls) {
		t.Fatalf("rpcdash answered %d elements, geth %d:\n%s\n%s", len(gotEls), len(wantEls), got.Body, want.Body)
	}
	for i := range wantEls {
		if !bytes.Equal(gotEls[i], wantEls[i]) {
			t.Errorf("element %d through rpcdash: %s\ngeth directly: %s", i, gotEls[i], wantEls[i])
		}
	}
	var health struct {
		ID    string `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(wantEls[1], &health); err != nil || health.ID != "health" || health.Error.Code != -32601 {
		t.Errorf("geth answered getHealth with %s, want its -32601 error", wantEls[1])
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Logf("same elements, different framing:\nrpcdash %s\ngeth    %s", got.Body, want.Body)
	}

	// go-ethereum's batch client gets a result or geth's error per element.
	var chainID hexutil.Big
	var healthRes, balance, head any
	elems := []rpc.BatchElem{
		{Method: "eth_chainId", Result: &chainID},
		{Method: "getHealth", Result: &healthRes},
		{Method: "eth_getBalance", Args: []any{devAddr, "latest"}, Result: &balance},
		{Method: "eth_blockNumber", Result: &head},
	}
	if err := s.via.rpc.BatchCallContext(ctxT(t), elems); err != nil {
		t.Fatal(err)
	}
	answeredBy(t, "geth", s.via.rec.last(t))
	for i, el := range elems {
		var rpcErr rpc.Error
		switch {
		case i == 1:
			if !errors.As(el.Error, &rpcErr) || rpcErr.ErrorCode() != -32601 || el.Error.Error() != health.Error.Message {
				t.Errorf("getHealth in a batch: %v, want geth's -32601 %q", el.Error, health.Error.Message)
			}
		case el.Error != nil:
			t.Errorf("%s in a batch: %v", el.Method, el.Error)
		}
	}
	if (*big.Int)(&chainID).Int64() != 1337 {
		t.Errorf("eth_chainId in a batch = %s, want 1337", &chainID)
	}
}
