package e2e

import (
	"bytes"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// TestIdentity_ReadsMatchGethByteForByte sends the same requests to geth
// and to rpcdash (simA drained, so geth answers) and compares the raw
// response bodies.
func TestIdentity_ReadsMatchGethByteForByte(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.rpcdash.drain("simA")

	// A block holding a transaction with 64 KiB of calldata makes the full
	// block answer big (over 128 KiB of hex).
	to := common.HexToAddress("0x00000000000000000000000000000000000a11ce")
	data := bytes.Repeat([]byte{0xab, 0xcd}, 32<<10)
	rcpt := sendAndMine(t, s.direct, &to, big.NewInt(12345), data)
	block := hexutil.EncodeBig(rcpt.BlockNumber)

	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`,
		`{"jsonrpc":"2.0","id":"str-id","method":"eth_blockNumber"}`,
		`{"jsonrpc":"2.0","id":18446744073709551617,"method":"net_version","params":[]}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"eth_getBalance","params":["%s","latest"]}`, devAddr),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"eth_getBalance","params":["%s", "%s"]}`, to, block),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":6,"method":"eth_getBlockByNumber","params":["%s",true]}`, block),
		`{"jsonrpc":"2.0","id":7,"method":"eth_getBlockByNumber","params":["latest",true]}`,
		`{"jsonrpc":"2.0","id":8,"method":"eth_getBlockByNumber","params":["0x0",false]}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"eth_getTransactionReceipt","params":["%s"]}`, rcpt.TxHash),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":10,"method":"eth_getTransactionByHash","params":["%s"]}`, rcpt.TxHash),
	}
	for _, req := range requests {
		want := mustPost(t, s.geth.URL(), req)
		got := mustPost(t, s.rpcdash.URL(), req)
		answeredBy(t, "geth", got.Header)
		if !bytes.Equal(got.Body, want.Body) {
			t.Errorf("request %s\n through rpcdash: %.300s\n geth directly:   %.300s", req, got.Body, want.Body)
		}
	}
	full := mustPost(t, s.rpcdash.URL(), requests[5])
	if len(full.Body) < 128<<10 {
		t.Errorf("full block answer is %d bytes, want over 128 KiB", len(full.Body))
	}

	// The real client decodes the same block through rpcdash.
	ctx := ctxT(t)
	viaBlock, err := s.via.eth.BlockByNumber(ctx, rcpt.BlockNumber)
	if err != nil {
		t.Fatal(err)
	}
	answeredBy(t, "geth", s.via.rec.last(t))
	if viaBlock.Hash() != rcpt.BlockHash || len(viaBlock.Transactions()) != 1 || viaBlock.Transactions()[0].Hash() != rcpt.TxHash {
		t.Errorf("block through rpcdash: hash %s with %d txs, want %s with tx %s", viaBlock.Hash(), len(viaBlock.Transactions()), rcpt.BlockHash, rcpt.TxHash)
	}
	bal, err := s.via.eth.BalanceAt(ctx, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Cmp(big.NewInt(12345)) != 0 {
		t.Errorf("balance through rpcdash = %s, want 12345", bal)
	}
}
