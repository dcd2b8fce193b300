package e2e

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"
)

// TestFilters_PinnedToTheEndpointThatCreatedThem creates one filter on
// geth and one on simA through rpcdash, then polls both with the pool
// changed around them: every poll and uninstall goes to the creator.
func TestFilters_PinnedToTheEndpointThatCreatedThem(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ctx := ctxT(t)
	call := func(result any, method string, args ...any) string {
		t.Helper()
		s.via.rec.take()
		if err := s.via.rpc.CallContext(ctx, result, method, args...); err != nil {
			t.Fatalf("%s through rpcdash: %v", method, err)
		}
		return s.via.rec.last(t).Get("X-Rpcdash-Endpoint")
	}

	// A block filter and a log filter on geth (simA drained) …
	s.rpcdash.drain("simA")
	var gethBlocks, gethLogs string
	if by := call(&gethBlocks, "eth_newBlockFilter"); by != "geth" {
		t.Fatalf("eth_newBlockFilter answered by %q with simA drained", by)
	}
	if by := call(&gethLogs, "eth_newFilter", map[string]any{"fromBlock": "latest"}); by != "geth" {
		t.Fatalf("eth_newFilter answered by %q with simA drained", by)
	}
	to := common.HexToAddress("0x00000000000000000000000000000000000f117e")
	rcpt := sendAndMine(t, s.via, &to, big.NewInt(1), nil)

	// … and one on simA (geth drained).
	s.rpcdash.undrain("simA")
	s.rpcdash.drain("geth")
	var simFilter string
	if by := call(&simFilter, "eth_newFilter", map[string]any{"fromBlock": "latest"}); by != "simA" {
		t.Fatalf("eth_newFilter answered by %q with geth drained", by)
	}

	// geth is drained, yet its filters are polled on geth: a drained node
	// still serves the state it holds. The block filter saw the new block.
	var hashes []common.Hash
	if by := call(&hashes, "eth_getFilterChanges", gethBlocks); by != "geth" {
		t.Errorf("geth's block filter polled on %q", by)
	}
	if len(hashes) == 0 || hashes[len(hashes)-1] != rcpt.BlockHash {
		t.Errorf("geth's block filter changes %v, want to end with block %s", hashes, rcpt.BlockHash)
	}
	var logs []any
	if by := call(&logs, "eth_getFilterChanges", gethLogs); by != "geth" {
		t.Errorf("geth's log filter polled on %q", by)
	}
	s.rpcdash.undrain("geth")
	for range 5 {
		if by := call(&logs, "eth_getFilterChanges", simFilter); by != "simA" {
			t.Errorf("simA's filter polled on %q", by)
		}
		if by := call(&hashes, "eth_getFilterChanges", gethBlocks); by != "geth" {
			t.Errorf("geth's block filter polled on %q", by)
		}
	}

	for id, owner := range map[string]string{gethBlocks: "geth", gethLogs: "geth", simFilter: "simA"} {
		var ok bool
		if by := call(&ok, "eth_uninstallFilter", id); by != owner || !ok {
			t.Errorf("eth_uninstallFilter(%s) answered %v by %q, want true by %s", id, ok, by, owner)
		}
	}
	// Gone from rpcdash and from geth.
	err := s.via.rpc.CallContext(ctx, &hashes, "eth_getFilterChanges", gethBlocks)
	var rpcErr rpc.Error
	if !errors.As(err, &rpcErr) {
		t.Errorf("polling an uninstalled filter through rpcdash: %v, want a JSON-RPC error", err)
	}
	if err := s.direct.rpc.CallContext(context.Background(), &hashes, "eth_getFilterChanges", gethBlocks); err == nil {
		t.Error("geth still holds the block filter after eth_uninstallFilter through rpcdash")
	}
}
