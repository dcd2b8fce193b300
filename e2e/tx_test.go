package e2e

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// TestWrite_SignedTxMinedAndSubmittedOnce signs a transaction locally,
// sends it with eth_sendRawTransaction through rpcdash, and checks that
// it was mined and that geth received exactly one submission.
func TestWrite_SignedTxMinedAndSubmittedOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.rpcdash.drain("simA")
	ctx := ctxT(t)

	nonceBefore, err := s.direct.eth.NonceAt(ctx, devAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	to := common.HexToAddress("0x000000000000000000000000000000000000b0b0")
	tx := signTx(t, s.via, &to, big.NewInt(777), nil)
	if _, err := s.geth.rpcServed("eth_sendRawTransaction"); err != nil { // starts a new count
		t.Fatal(err)
	}

	s.via.rec.take()
	if err := s.via.eth.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	h := s.via.rec.last(t)
	answeredBy(t, "geth", h)
	if h.Get("X-Rpcdash-Attempts") != "1" || h.Get("X-Rpcdash-Hedged") != "0" {
		t.Errorf("write answered with attempts %q hedged %q, want 1 and 0", h.Get("X-Rpcdash-Attempts"), h.Get("X-Rpcdash-Hedged"))
	}

	rcpt := waitMined(t, s.via, tx.Hash())
	if rcpt.Status != 1 || rcpt.TxHash != tx.Hash() {
		t.Fatalf("receipt %+v, want a successful receipt of %s", rcpt, tx.Hash())
	}
	answeredBy(t, "geth", s.via.rec.take()...)

	// geth's own view: one submission, the nonce advanced by one, the pool
	// empty, the value arrived.
	served, err := s.geth.rpcServed("eth_sendRawTransaction")
	if err != nil {
		t.Fatal(err)
	}
	if served != 1 {
		t.Errorf("geth served eth_sendRawTransaction %d times, want exactly 1", served)
	}
	nonceAfter, err := s.direct.eth.NonceAt(ctx, devAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if nonceAfter != nonceBefore+1 {
		t.Errorf("dev account nonce went from %d to %d, want +1", nonceBefore, nonceAfter)
	}
	var pool map[string]hexutil.Uint
	if err := s.direct.rpc.CallContext(ctx, &pool, "txpool_status"); err != nil {
		t.Fatal(err)
	}
	if pool["pending"] != 0 || pool["queued"] != 0 {
		t.Errorf("geth txpool after mining: %v, want empty", pool)
	}
	bal, err := s.direct.eth.BalanceAt(ctx, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Cmp(big.NewInt(777)) != 0 {
		t.Errorf("recipient balance %s, want 777", bal)
	}

	// The same raw transaction again is geth's to refuse, and rpcdash
	// passes geth's error through rather than hiding or retrying it.
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	req := `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["` + hexutil.Encode(raw) + `"]}`
	got := mustPost(t, s.rpcdash.URL(), req)
	answeredBy(t, "geth", got.Header)
	var resp struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(got.Body, &resp); err != nil || resp.Error == nil {
		t.Fatalf("re-sent transaction answered %s, want geth's error", got.Body)
	}
	if served, _ := s.geth.rpcServed("eth_sendRawTransaction"); served != 1 {
		t.Errorf("re-sending once reached geth %d times, want 1", served)
	}
	t.Logf("geth refused the duplicate: %d %s", resp.Error.Code, resp.Error.Message)
}
