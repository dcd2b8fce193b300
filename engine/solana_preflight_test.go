package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// confirmedBlockhash is the blockhash u hands out at the confirmed
// commitment, as a client reads it through rpcdash from the endpoint ahead.
func confirmedBlockhash(t *testing.T, u *sim.Upstream) string {
	t.Helper()
	var out struct{ Value struct{ Blockhash string } }
	if directResult(t, u, "getLatestBlockhash", []any{map[string]string{"commitment": "confirmed"}}, &out); out.Value.Blockhash == "" {
		t.Fatal("getLatestBlockhash: no blockhash")
	}
	return out.Value.Blockhash
}

func sendSolanaTx(t *testing.T, h *headRig, id int, blockhash string) reply {
	t.Helper()
	tx, err := sim.SolanaTransaction(blockhash)
	if err != nil {
		t.Fatal(err)
	}
	return h.call(id, "sendTransaction", tx, map[string]any{"encoding": "base64", "preflightCommitment": "confirmed"})
}

// A client takes the latest blockhash from the endpoint ahead and sends a
// transaction with it; the send goes to an endpoint three slots behind,
// whose preflight has not seen that blockhash yet: "Transaction simulation
// failed: Blockhash not found". A node that fails preflight does not send
// the transaction, so it may go to the endpoint that has the blockhash, as
// a client of that endpoint alone never sees the failure.
func TestSolana_PreflightBlockhashNotFoundFromAnEndpointBehindGoesToTheNext(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) {
		c.Router.LagPenalty = 0
		c.Router.WriteAffinity = 0 // each send is routed afresh
	})
	r.warmUp()
	r.sims[1].SetHeadLag(3)
	r.probeAll()
	var rep reply
	for i := range 4 {
		before := r.sims[1].MethodCount("sendTransaction")
		rep = sendSolanaTx(t, r, i, confirmedBlockhash(t, r.sims[0]))
		r.clock.Advance(time.Second)
		r.probeAll()
		if r.sims[1].MethodCount("sendTransaction") > before {
			break
		}
	}
	mustGoOnFromS1(t, rep)
}

// expiredBlockhashRig is two Solana sims at the pool head and a blockhash
// they made 200 s ago, expired on both.
func expiredBlockhashRig(t *testing.T) (*headRig, string) {
	t.Helper()
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	old := confirmedBlockhash(t, r.sims[0])
	r.clock.Advance(200 * time.Second)
	r.probeAll()
	return r, old
}

// A blockhash every endpoint finds wanting (expired) from an endpoint at
// the pool head: the failure is the transaction's, relayed as it came, one
// send per transaction.
func TestSolana_PreflightBlockhashNotFoundAtThePoolHeadIsRelayed(t *testing.T) {
	r, old := expiredBlockhashRig(t)
	before := r.upstreamCount("sendTransaction")
	const sends = 4
	for i := range sends {
		rep := sendSolanaTx(t, r, i, old)
		mustError(t, rep, "Transaction simulation failed: Blockhash not found")
	}
	if n := r.upstreamCount("sendTransaction") - before; n != sends {
		t.Fatalf("%d sends of an expired blockhash cost %d upstream sends, want %d", sends, n, sends)
	}
}

// The reads that check a blockhash the same way: isBlockhashValid answers
// false and simulateTransaction err "BlockhashNotFound" at an endpoint that
// has not reached the blockhash a client just read from another. Set aside
// while the next endpoint is asked, as a null block is.
func TestSolana_BlockhashReadsFromAnEndpointBehindAreSetAside(t *testing.T) {
	for _, tc := range []struct {
		method string
		params func(t *testing.T, blockhash string) []any
		good   string
	}{
		{"isBlockhashValid", func(t *testing.T, bh string) []any {
			return []any{bh, map[string]any{"commitment": "confirmed"}}
		}, `"value":true`},
		{"simulateTransaction", func(t *testing.T, bh string) []any {
			tx, err := sim.SolanaTransaction(bh)
			if err != nil {
				t.Fatal(err)
			}
			return []any{tx, map[string]any{"encoding": "base64", "commitment": "confirmed"}}
		}, `"err":null`},
	} {
		t.Run(tc.method, func(t *testing.T) {
			r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Router.LagPenalty = 0 })
			r.warmUp()
			r.sims[1].SetHeadLag(3)
			r.probeAll()
			bh := confirmedBlockhash(t, r.sims[0])
			rep := r.s1Asked(tc.method, func(i int) reply { return r.call(i, tc.method, tc.params(t, bh)...) })
			t.Logf("%s asked of s1 first: answered by %s after %d attempts: %s", tc.method, rep.endpoint, rep.attempts, rep.body)
			mustOK(t, rep)
			if rep.endpoint != "s0" || rep.attempts != 2 || !strings.Contains(string(rep.body), tc.good) {
				t.Fatalf("answered by %s after %d attempts: %s; want s0's %s after 2", rep.endpoint, rep.attempts, rep.body, tc.good)
			}
		})
	}
}

// An expired blockhash, asked of endpoints at the pool head: the answer is
// the blockhash's, relayed from the first endpoint.
func TestSolana_BlockhashReadsAtThePoolHeadAreRelayed(t *testing.T) {
	r, old := expiredBlockhashRig(t)
	before := r.upstreamCount("isBlockhashValid")
	const reads = 4
	for i := range reads {
		rep := r.call(i, "isBlockhashValid", old, map[string]any{"commitment": "confirmed"})
		if mustOK(t, rep); !strings.Contains(string(rep.body), `"value":false`) {
			t.Fatalf("expired blockhash: %s", rep.body)
		}
	}
	if n := r.upstreamCount("isBlockhashValid") - before; n != reads {
		t.Fatalf("%d reads of an expired blockhash cost %d upstream requests, want %d", reads, n, reads)
	}
}

// A Solana node behind the cluster refuses a transaction before sending it
// (-32005 "Node is behind by N slots", its preflight health check). Probes
// find such a node out only at their next round; until then a send that
// lands on it goes to the next endpoint, as a client of a healthy endpoint
// never sees the refusal. The transaction is sent once.
func TestSolana_SendRefusedByAnUnhealthyNodeGoesToTheNext(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) {
		c.Router.LagPenalty = 0
		c.Router.WriteAffinity = 0
	})
	r.warmUp()
	answerWith(r.sims[1:], "sendTransaction", -32005, "Node is behind by 200 slots")
	bh := confirmedBlockhash(t, r.sims[0])
	var rep reply
	for i := range 4 {
		before := r.sims[1].MethodCount("sendTransaction")
		rep = sendSolanaTx(t, r, i, bh)
		if r.sims[1].MethodCount("sendTransaction") > before {
			break
		}
	}
	mustGoOnFromS1(t, rep)
}

// mustGoOnFromS1 checks a send asked of s1 first: s0 answered it, after s1's
// refusal and nothing else.
func mustGoOnFromS1(t *testing.T, rep reply) {
	t.Helper()
	t.Logf("send asked of s1 first: answered by %s after %d attempts: %s", rep.endpoint, rep.attempts, rep.body)
	mustOK(t, rep)
	if rep.endpoint != "s0" || rep.attempts != 2 {
		t.Fatalf("answered by %s after %d attempts, want s0 after 2", rep.endpoint, rep.attempts)
	}
}
