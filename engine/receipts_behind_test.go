package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// sendRawDirect sends a transaction straight to u (another client's, or
// one sent through another RPC) and returns its hash.
func sendRawDirect(t *testing.T, u *sim.Upstream, raw string) string {
	t.Helper()
	var hash string
	if directResult(t, u, "eth_sendRawTransaction", []string{raw}, &hash); hash == "" {
		t.Fatal("eth_sendRawTransaction: no hash")
	}
	return hash
}

// The EVM twin of a Solana status turning null: a client polling a
// transaction's receipt through rpcdash got it, then null, when a poll
// went to an endpoint 3 blocks behind (within chain.max_head_lag) that had
// not reached the block it was mined in; a node never un-sees a receipt
// (viem's getTransactionReceipt throws TransactionReceiptNotFoundError on
// the null). A null receipt from an endpoint behind the pool head is set
// aside while the next endpoint is asked, as a null block is.
func TestReceipts_NullFromAnEndpointBehindIsSetAside(t *testing.T) {
	r := behindRig(t, sim.ChainEVM, true, nil)
	hash := sendRawDirect(t, r.sims[0], fmt.Sprintf("0x02f8%016x", time.Now().UnixNano())) // a transaction of its own
	r.round()                                                                              // mined in the next block, which s1, 3 blocks behind, has not reached
	rep := r.s1Asked("eth_getTransactionReceipt", func(i int) reply { return r.call(i, "eth_getTransactionReceipt", hash) })
	t.Logf("asked of s1 first: answered by %s after %d attempts: %s", rep.endpoint, rep.attempts, rep.body)
	mustOK(t, rep)
	if rep.endpoint != "s0" || rep.attempts != 2 || !strings.Contains(string(rep.body), `"status":"0x1"`) {
		t.Fatalf("answered by %s after %d attempts: %s; want s0's receipt after 2", rep.endpoint, rep.attempts, rep.body)
	}
}

// A transaction not mined yet has no receipt anywhere: from an endpoint at
// the pool head its null is relayed as it came, one request per poll.
func TestReceipts_NullAtThePoolHeadIsRelayed(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainEVM, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	before := r.upstreamCount("eth_getTransactionReceipt")
	const polls = 4
	for i := range polls {
		rep := r.call(i, "eth_getTransactionReceipt", "0x"+strings.Repeat("ab", 32))
		if mustOK(t, rep); !strings.Contains(string(rep.body), `"result":null`) {
			t.Fatalf("unknown hash: %s", rep.body)
		}
	}
	if n := r.upstreamCount("eth_getTransactionReceipt") - before; n != polls {
		t.Fatalf("%d polls of a receipt not mined cost %d upstream requests, want %d", polls, n, polls)
	}
}

// An endpoint in sync whose head was last seen a block ago, before another
// endpoint's newer one, is not behind: the block the chain made since is
// credited to it (its lag is 0). Judged by its last seen head alone, each
// poll of a transaction not mined yet that went to it waited for another
// endpoint's null too (20 polls: 46 upstream requests over three sims).
func TestReceipts_NullFromAnEndpointInSyncIsRelayedAsItCame(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainEVM, func(c *engine.Config) { c.Router.WriteAffinity = 0 })
	r.warmUp()
	r.clock.Advance(time.Second)
	r.eng.ObserveProbeHead("s0", r.sims[0].Head()) // the pool head moves past s1's last seen one
	if lag := r.endpoint("s1").Lag; lag != 0 {
		t.Fatalf("s1's lag %d; want 0, the block made since its probe credited to it", lag)
	}
	hash := "0x" + strings.Repeat("34", 32) // never mined
	rep := r.s1Asked("eth_getTransactionReceipt", func(i int) reply { return r.call(i, "eth_getTransactionReceipt", hash) })
	if rep.status != 200 || !strings.Contains(string(rep.body), `"result":null`) || rep.attempts != 1 {
		t.Fatalf("HTTP %d after %d attempts from %s: %s; want s1's null as it came, one attempt", rep.status, rep.attempts, rep.endpoint, rep.body)
	}
}
