package e2e

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// devKey is geth's well-known developer key (cmd/utils.DeveloperKey):
// with an empty keystore, geth --dev imports it and funds its address in
// the genesis block, so the tests can sign locally.
var devKey, _ = crypto.HexToECDSA("b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291")

var devAddr = crypto.PubkeyToAddress(devKey.PublicKey)

// signTx builds and signs a dynamic-fee transaction from the dev account
// with the nonce, gas and fees asked of c, as a wallet would.
func signTx(t *testing.T, c *client, to *common.Address, value *big.Int, data []byte) *types.Transaction {
	t.Helper()
	ctx := ctxT(t)
	chainID, err := c.eth.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nonce, err := c.eth.PendingNonceAt(ctx, devAddr)
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.eth.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	gas, err := c.eth.EstimateGas(ctx, ethereum.CallMsg{From: devAddr, To: to, Value: value, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	tip := big.NewInt(1_000_000_000)
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	tx, err := types.SignNewTx(devKey, types.LatestSignerForChainID(chainID), &types.DynamicFeeTx{
		ChainID: chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap,
		Gas: gas, To: to, Value: value, Data: data,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// waitMined polls for the receipt; geth --dev seals a block as soon as a
// transaction is pending.
func waitMined(t *testing.T, c *client, hash common.Hash) *types.Receipt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		r, err := c.eth.TransactionReceipt(ctx, hash)
		if err == nil {
			return r
		}
		// Right after start geth may still be indexing transactions, and
		// says so instead of answering null.
		if !errors.Is(err, ethereum.NotFound) && !strings.Contains(err.Error(), "transaction indexing is in progress") {
			t.Fatalf("receipt of %s: %v", hash, err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("transaction %s not mined: %v", hash, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sendAndMine signs, sends through c and waits for the receipt.
func sendAndMine(t *testing.T, c *client, to *common.Address, value *big.Int, data []byte) *types.Receipt {
	t.Helper()
	tx := signTx(t, c, to, value, data)
	if err := c.eth.SendTransaction(ctxT(t), tx); err != nil {
		t.Fatal(err)
	}
	r := waitMined(t, c, tx.Hash())
	if r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("transaction %s failed: status %d", tx.Hash(), r.Status)
	}
	return r
}

// reverterInitCode deploys a contract whose every call reverts with
// Error(reason), the ABI encoding Solidity's require/revert produce.
func reverterInitCode(reason string) []byte {
	if len(reason) > 32 {
		panic("reason must fit one word")
	}
	payload := common.FromHex("0x08c379a0")
	payload = append(payload, common.LeftPadBytes([]byte{0x20}, 32)...)
	payload = append(payload, common.LeftPadBytes([]byte{byte(len(reason))}, 32)...)
	payload = append(payload, common.RightPadBytes([]byte(reason), 32)...)
	// CODECOPY the payload (which follows these 12 bytes) to memory and
	// REVERT with it.
	runtime := append([]byte{0x60, byte(len(payload)), 0x60, 12, 0x60, 0, 0x39, 0x60, byte(len(payload)), 0x60, 0, 0xfd}, payload...)
	// CODECOPY the runtime (which follows these 12 bytes) and RETURN it.
	return append([]byte{0x60, byte(len(runtime)), 0x60, 12, 0x60, 0, 0x39, 0x60, byte(len(runtime)), 0x60, 0, 0xf3}, runtime...)
}
