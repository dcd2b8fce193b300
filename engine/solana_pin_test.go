package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// With chain.pin = "confirmed", getLatestBlockhash naming no commitment is
// answered at confirmed, about 32 slots ahead of the finalized bank a node
// checks a blockhash against by default. The calls that check the
// blockhash a client just read, also naming none, must be pinned alike:
// else every send fails preflight ("Blockhash not found"), every
// simulateTransaction answers BlockhashNotFound and every isBlockhashValid
// false, where a client of one endpoint, all at finalized, sees none.
func TestSolana_PinnedBlockhashPassesTheChecksThatNameNoCommitment(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Chain.Pin = "confirmed" })
	r.warmUp()
	before := r.upstreamCount("sendTransaction")
	const rounds = 3
	for i := range rounds {
		rep := r.call(4*i, "getLatestBlockhash")
		mustOK(t, rep)
		var out struct {
			Result struct{ Value struct{ Blockhash string } }
		}
		if err := json.Unmarshal(rep.body, &out); err != nil || out.Result.Value.Blockhash == "" {
			t.Fatalf("getLatestBlockhash: %v %s", err, rep.body)
		}
		bh := out.Result.Value.Blockhash
		tx, err := sim.SolanaTransaction(bh)
		if err != nil {
			t.Fatal(err)
		}
		if rep := r.call(4*i+1, "isBlockhashValid", bh); !strings.Contains(string(rep.body), `"value":true`) {
			t.Fatalf("isBlockhashValid of the blockhash just read: %s", rep.body)
		}
		if rep := r.call(4*i+2, "simulateTransaction", tx, map[string]any{"encoding": "base64"}); !strings.Contains(string(rep.body), `"err":null`) {
			t.Fatalf("simulateTransaction with the blockhash just read: %s", rep.body)
		}
		mustOK(t, r.call(4*i+3, "sendTransaction", tx, map[string]any{"encoding": "base64"}))
	}
	if n := r.upstreamCount("sendTransaction") - before; n != rounds {
		t.Fatalf("%d sends cost %d upstream sends, want %d", rounds, n, rounds)
	}
}

// With chain.pin = "confirmed", getSlot naming no commitment answers a
// confirmed slot; getBlock of it naming none must be pinned alike, or every
// node answers -32004 "Block not available for slot" (its finalized bank
// is about 32 slots behind), where a client of one endpoint, reading the
// finalized slot and its block, gets the block.
func TestSolana_PinnedSlotsBlockIsAvailable(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Chain.Pin = "confirmed" })
	r.warmUp()
	for i := range 3 {
		rep := r.call(2*i, "getSlot")
		mustOK(t, rep)
		var out struct{ Result int64 }
		if err := json.Unmarshal(rep.body, &out); err != nil || out.Result == 0 {
			t.Fatalf("getSlot: %v %s", err, rep.body)
		}
		if rep := r.call(2*i+1, "getBlock", out.Result); !strings.Contains(string(rep.body), `"blockhash"`) {
			t.Fatalf("getBlock of the slot just read (%d): %s", out.Result, rep.body)
		}
	}
}
