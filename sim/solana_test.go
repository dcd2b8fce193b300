package sim

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

func TestBase58_KnownVectors(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"hello world":  "StV1DL6CwTryKyV",
		"\x00\x00\x01": "112",
	} {
		if got := base58([]byte(in)); got != want {
			t.Errorf("base58(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSolana_HealthFollowsUnhealthy(t *testing.T) {
	clock := newManualClock()
	u := start(t, Config{Chain: ChainSolana, Clock: clock.Now, HeadLag: 4})
	c := newClient(t)
	var health string
	result(t, c, u, &health, "getHealth")
	if health != "ok" {
		t.Fatalf("health %q", health)
	}
	u.SetUnhealthy(true)
	r := call(t, c, u, "getHealth")
	if r.Error == nil {
		t.Fatalf("unhealthy node answered %s", r.Result)
	}
	data, _ := r.Error.Data.(map[string]any)
	if r.Error.Code != -32005 || r.Error.Message != "Node is unhealthy" || data["numSlotsBehind"] != float64(4) {
		t.Fatalf("unhealthy answer %+v", r.Error)
	}
}

func TestSolana_SlotsAndBlockhash(t *testing.T) {
	clock := newManualClock()
	u := start(t, Config{Chain: ChainSolana, Clock: clock.Now})
	c := newClient(t)
	var slot, height int64
	result(t, c, u, &slot, "getSlot")
	result(t, c, u, &height, "getBlockHeight")
	if slot != u.Head() || height <= 0 || height >= slot {
		t.Fatalf("slot %d (head %d), block height %d", slot, u.Head(), height)
	}
	var bh struct {
		Context struct{ Slot int64 } `json:"context"`
		Value   struct {
			Blockhash            string `json:"blockhash"`
			LastValidBlockHeight int64  `json:"lastValidBlockHeight"`
		} `json:"value"`
	}
	result(t, c, u, &bh, "getLatestBlockhash")
	if bh.Context.Slot != slot || len(bh.Value.Blockhash) < 32 || bh.Value.LastValidBlockHeight != height+150 {
		t.Fatalf("latest blockhash %+v", bh)
	}
}

func TestSolana_AccountGenesisAndSend(t *testing.T) {
	clock := newManualClock()
	u := start(t, Config{Chain: ChainSolana, Clock: clock.Now})
	other := start(t, Config{Chain: ChainSolana, ChainID: 2})
	c := newClient(t)

	var acct struct {
		Context struct{ Slot int64 } `json:"context"`
		Value   struct {
			Lamports uint64 `json:"lamports"`
			Owner    string `json:"owner"`
		} `json:"value"`
	}
	result(t, c, u, &acct, "getAccountInfo", "Vote111111111111111111111111111111111111111", map[string]string{"encoding": "base64"})
	if acct.Context.Slot != u.Head() || acct.Value.Owner == "" || acct.Value.Lamports == 0 {
		t.Fatalf("account %+v", acct)
	}

	var g1, g2 string
	result(t, c, u, &g1, "getGenesisHash")
	result(t, c, other, &g2, "getGenesisHash")
	if g1 == g2 || len(g1) < 32 {
		t.Fatalf("genesis hashes %q %q", g1, g2)
	}

	var sig string
	result(t, c, u, &sig, "sendTransaction", "AQAB", map[string]string{"encoding": "base64"})
	if len(sig) < 80 || strings.Trim(sig, base58Alphabet) != "" {
		t.Fatalf("signature %q", sig)
	}
	if got := u.Submissions(); len(got) != 1 || got[0] != "AQAB" {
		t.Fatalf("submissions %q", got)
	}
	if r := call(t, c, u, "eth_blockNumber"); r.Error == nil || r.Error.Code != CodeMethodNotFound {
		t.Fatalf("EVM method on Solana: %+v", r)
	}
}

// Reads answer at the commitment asked, and -32016 below a minContextSlot,
// with the slot they are at, as a real node does.
func TestSolana_CommitmentAndMinContextSlot(t *testing.T) {
	clock := newManualClock()
	u := start(t, Config{Chain: ChainSolana, Clock: clock.Now})
	c := newClient(t)
	var confirmed int64
	result(t, c, u, &confirmed, "getSlot", map[string]string{"commitment": "confirmed"})
	var bal struct {
		Context struct{ Slot int64 } `json:"context"`
	}
	result(t, c, u, &bal, "getBalance", "Vote111111111111111111111111111111111111111", map[string]any{"commitment": "confirmed", "minContextSlot": confirmed})
	if confirmed != u.Head()+31 || bal.Context.Slot != confirmed {
		t.Fatalf("confirmed slot %d, balance context slot %d (finalized %d)", confirmed, bal.Context.Slot, u.Head())
	}
	r := call(t, c, u, "getBalance", "Vote111111111111111111111111111111111111111", map[string]any{"minContextSlot": confirmed})
	if r.Error == nil {
		t.Fatalf("finalized read with a confirmed minContextSlot answered %s", r.Result)
	}
	data, _ := r.Error.Data.(map[string]any)
	if r.Error.Code != -32016 || r.Error.Message != "Minimum context slot has not been reached" || data["contextSlot"] != float64(u.Head()) {
		t.Fatalf("finalized read with a confirmed minContextSlot: %+v", r)
	}
}

func solanaTx(t testing.TB, blockhash string) string {
	t.Helper()
	tx, err := SolanaTransaction(blockhash)
	if err != nil {
		t.Fatalf("blockhash %q: %v", blockhash, err)
	}
	return tx
}

// blockhashPair is two Solana sims on one manual clock, behind 3 slots
// after ahead, a client, and the confirmed blockhash ahead just made.
func blockhashPair(t *testing.T) (clock *testutil.Clock, ahead, behind *Upstream, c *http.Client, blockhash string) {
	t.Helper()
	clock = newManualClock()
	ahead = start(t, Config{Chain: ChainSolana, Clock: clock.Now})
	behind = start(t, Config{Chain: ChainSolana, Clock: clock.Now, HeadLag: 3})
	c = newClient(t)
	var bh struct {
		Value struct{ Blockhash string } `json:"value"`
	}
	result(t, c, ahead, &bh, "getLatestBlockhash", map[string]string{"commitment": "confirmed"})
	return clock, ahead, behind, c, bh.Value.Blockhash
}

// A node fails preflight for a blockhash it has not made yet (one a node
// ahead of it handed out) or one expired, and takes the transaction with
// preflight skipped; placeholder bytes are taken as before.
func TestSolana_PreflightChecksTheBlockhash(t *testing.T) {
	clock, ahead, behind, c, blockhash := blockhashPair(t)
	tx := solanaTx(t, blockhash)
	b64 := map[string]any{"encoding": "base64", "preflightCommitment": "confirmed"}
	var sig string
	result(t, c, ahead, &sig, "sendTransaction", tx, b64)
	r := call(t, c, behind, "sendTransaction", tx, b64)
	if r.Error == nil || r.Error.Code != -32002 || r.Error.Message != "Transaction simulation failed: Blockhash not found" {
		t.Fatalf("a node 3 slots behind took a blockhash it has not made: %+v", r)
	}
	result(t, c, behind, &sig, "sendTransaction", tx, map[string]any{"encoding": "base64", "skipPreflight": true})
	clock.Advance(200 * time.Duration(ahead.cfg.BlockTime))
	if r := call(t, c, ahead, "sendTransaction", tx, b64); r.Error == nil || r.Error.Code != -32002 {
		t.Fatalf("an expired blockhash passed preflight: %+v", r)
	}
	result(t, c, behind, &sig, "sendTransaction", "AQAB", map[string]string{"encoding": "base64"})
}

// isBlockhashValid and simulateTransaction read the blockhash as preflight
// does: a node behind has not made one from a node ahead.
func TestSolana_BlockhashValidAndSimulate(t *testing.T) {
	_, ahead, behind, c, blockhash := blockhashPair(t)
	confirmed := map[string]string{"commitment": "confirmed"}
	var valid struct{ Value bool }
	if result(t, c, ahead, &valid, "isBlockhashValid", blockhash, confirmed); !valid.Value {
		t.Fatal("the node that made the blockhash says it is not valid")
	}
	if result(t, c, behind, &valid, "isBlockhashValid", blockhash, confirmed); valid.Value {
		t.Fatal("a node 3 slots behind says a blockhash it has not made is valid")
	}
	var sim struct {
		Value struct{ Err any } `json:"value"`
	}
	tx := solanaTx(t, blockhash)
	b64 := map[string]string{"encoding": "base64", "commitment": "confirmed"}
	if result(t, c, ahead, &sim, "simulateTransaction", tx, b64); sim.Value.Err != nil {
		t.Fatalf("simulation at the node that made the blockhash: %v", sim.Value.Err)
	}
	if result(t, c, behind, &sim, "simulateTransaction", tx, b64); sim.Value.Err != "BlockhashNotFound" {
		t.Fatalf("simulation at a node behind: %v", sim.Value.Err)
	}
}

// sendTransaction answers the transaction's own first signature, as a node
// does (web3.js and @solana/kit compute it themselves to confirm the
// transaction; the sim answered a digest of the request that matched
// nothing), and getSignatureStatuses follows it through processed,
// confirmed and finalized on every sim, as a cluster's nodes all see a
// landed transaction. A signature no sim took is null.
func TestSolana_SendAnswersItsSignatureAndStatusesFollowTheSlots(t *testing.T) {
	clock, ahead, behind, c, blockhash := blockhashPair(t)
	raw, err := base64.StdEncoding.DecodeString(solanaTx(t, blockhash))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rand.Read(raw[1:65]); err != nil { // a signature of its own: other tests send the zero one
		t.Fatal(err)
	}
	want := base58(raw[1:65])
	var sig string
	result(t, c, ahead, &sig, "sendTransaction", base64.StdEncoding.EncodeToString(raw), map[string]any{"encoding": "base64", "preflightCommitment": "confirmed"})
	if sig != want {
		t.Fatalf("signature %q, want the transaction's first signature %q", sig, want)
	}
	type status struct {
		Slot               int64  `json:"slot"`
		ConfirmationStatus string `json:"confirmationStatus"`
	}
	statuses := func(u *Upstream) []*status {
		t.Helper()
		var r struct {
			Value []*status `json:"value"`
		}
		result(t, c, u, &r, "getSignatureStatuses", []string{sig, "UnknownSig"})
		if len(r.Value) != 2 || r.Value[1] != nil {
			t.Fatalf("statuses %+v, want two, the unknown one null", r.Value)
		}
		return r.Value
	}
	if s := statuses(ahead)[0]; s == nil || s.ConfirmationStatus != "processed" {
		t.Fatalf("right after sending: %+v, want processed", s)
	}
	if s := statuses(behind)[0]; s != nil {
		t.Fatalf("a node 3 slots behind the slot it landed in: %+v, want null", s)
	}
	slot := ahead.cfg.BlockTime
	clock.Advance(4 * slot)
	if s := statuses(behind)[0]; s == nil || s.ConfirmationStatus != "confirmed" {
		t.Fatalf("4 slots later, on the other node: %+v, want confirmed", s)
	}
	clock.Advance(40 * slot)
	if s := statuses(ahead)[0]; s == nil || s.ConfirmationStatus != "finalized" {
		t.Fatalf("44 slots later: %+v, want finalized", s)
	}
}
