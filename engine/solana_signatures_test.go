package engine_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// sendDirect sends a transaction of its own signature straight to u (as
// another client, or another rpcdash, does) and returns its signature.
func sendDirect(t *testing.T, u *sim.Upstream, blockhash string) string {
	t.Helper()
	tx, err := sim.SolanaTransaction(blockhash)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(tx)
	rand.Read(raw[1:65]) // other tests' transactions carry the zero signature
	var sig string
	params := []any{base64.StdEncoding.EncodeToString(raw), map[string]any{"encoding": "base64", "preflightCommitment": "confirmed"}}
	if directResult(t, u, "sendTransaction", params, &sig); sig == "" {
		t.Fatal("sendTransaction: no signature")
	}
	return sig
}

// A client polling getSignatureStatuses through rpcdash saw a transaction
// it had seen processed, even confirmed, turn null: the poll had gone to
// an endpoint three slots behind (within chain.max_head_lag), which had
// not seen the slot it landed in yet (two Solana sims 3 slots apart, a
// transaction sent to the one ahead, @solana/kit polling through rpcdash:
// 3 of 10 went confirmed > null > confirmed; polling either sim directly,
// none went back). A null status from an endpoint behind the pool head is
// set aside while the next endpoint is asked, as a null block is.
func TestSolana_SignatureStatusNullFromAnEndpointBehindIsSetAside(t *testing.T) {
	r := behindRig(t, sim.ChainSolana, true, nil)
	sig := sendDirect(t, r.sims[0], confirmedBlockhash(t, r.sims[0]))
	rep := r.s1Asked("getSignatureStatuses", func(i int) reply { return r.call(i, "getSignatureStatuses", []string{sig}) })
	t.Logf("asked of s1 first: answered by %s after %d attempts: %s", rep.endpoint, rep.attempts, rep.body)
	mustOK(t, rep)
	if rep.endpoint != "s0" || rep.attempts != 2 || !strings.Contains(string(rep.body), `"confirmationStatus":"processed"`) {
		t.Fatalf("answered by %s after %d attempts: %s; want s0's status after 2", rep.endpoint, rep.attempts, rep.body)
	}
}

// A signature no endpoint has seen is null everywhere: from an endpoint at
// the pool head it is relayed as it came, one request each.
func TestSolana_SignatureStatusNullAtThePoolHeadIsRelayed(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	before := r.upstreamCount("getSignatureStatuses")
	const reads = 4
	for i := range reads {
		rep := r.call(i, "getSignatureStatuses", []string{"UnknownSig"})
		if mustOK(t, rep); !strings.Contains(string(rep.body), `"value":[null]`) {
			t.Fatalf("unknown signature: %s", rep.body)
		}
	}
	if n := r.upstreamCount("getSignatureStatuses") - before; n != reads {
		t.Fatalf("%d reads of an unknown signature cost %d upstream requests, want %d", reads, n, reads)
	}
}

// The same in a batch: its reads go upstream as one batch, and each
// element is judged on its own.
func TestSolana_SignatureStatusNullInABatchFromAnEndpointBehindIsSetAside(t *testing.T) {
	r := behindRig(t, sim.ChainSolana, true, nil)
	sig := sendDirect(t, r.sims[0], confirmedBlockhash(t, r.sims[0]))
	rep := r.s1Asked("getSignatureStatuses", func(i int) reply {
		return r.post(`[{"jsonrpc":"2.0","id":1,"method":"getSignatureStatuses","params":[["` + sig + `"]]},` +
			`{"jsonrpc":"2.0","id":2,"method":"getBalance","params":["Vote111111111111111111111111111111111111111"]}]`)
	})
	var answers []struct {
		ID     int
		Result struct{ Value json.RawMessage }
	}
	if err := json.Unmarshal(rep.body, &answers); err != nil || len(answers) != 2 {
		t.Fatalf("batch answer %s: %v", rep.body, err)
	}
	for _, a := range answers {
		if a.ID == 1 && !strings.Contains(string(a.Result.Value), `"confirmationStatus":"processed"`) {
			t.Fatalf("status through rpcdash %s, want the one s0 gives: %s", a.Result.Value, rep.body)
		}
	}
}

// An endpoint in sync whose slot was last seen a second ago, before
// another endpoint's newer one, is not behind: the slots the chain made
// since are credited to it (its lag is 0). Judged by its last probed slot
// alone, two of three endpoints in sync were behind nearly always, and
// each poll of a signature not landed, or each isBlockhashValid false,
// that went to one waited for another endpoint's answer too (60 polls:
// 95-111 upstream requests over three sims).
func TestSolana_NullStatusAndInvalidBlockhashFromAnEndpointInSyncAreRelayedAsTheyCame(t *testing.T) {
	r := newChainHeadRig(t, 2, sim.ChainSolana, func(c *engine.Config) { c.Router.LagPenalty = 0; c.Router.WriteAffinity = 0 })
	r.warmUp()
	r.clock.Advance(time.Second)
	r.eng.ObserveProbeHead("s0", r.sims[0].Head()) // the pool head moves past s1's last seen one
	if lag := r.endpoint("s1").Lag; lag != 0 {
		t.Fatalf("s1's lag %d; want 0, the slots made since its probe credited to it", lag)
	}
	rep := r.s1Asked("getSignatureStatuses", func(i int) reply { return r.call(i, "getSignatureStatuses", []string{"UnknownSig"}) })
	if mustOK(t, rep); !strings.Contains(string(rep.body), `"value":[null]`) || rep.attempts != 1 {
		t.Fatalf("after %d attempts from %s: %s; want s1's null as it came, one attempt", rep.attempts, rep.endpoint, rep.body)
	}
	const never = "11111111111111111111111111111111"
	rep = r.s1Asked("isBlockhashValid", func(i int) reply { return r.call(i, "isBlockhashValid", never) })
	if mustOK(t, rep); !strings.Contains(string(rep.body), `"value":false`) || rep.attempts != 1 {
		t.Fatalf("isBlockhashValid after %d attempts from %s: %s; want s1's false as it came, one attempt", rep.attempts, rep.endpoint, rep.body)
	}
}
