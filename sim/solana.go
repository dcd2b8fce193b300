package sim

import (
	"encoding/json"
	"fmt"
	"math"
)

var solanaMethods = map[string]method{
	"getHealth":            solHealth,
	"getSlot":              solSlot,
	"getBlockHeight":       solBlockHeight,
	"getBlock":             solBlock,
	"getLatestBlockhash":   solLatestBlockhash,
	"getAccountInfo":       solAccountInfo,
	"getBalance":           solBalance,
	"getGenesisHash":       func(u *Upstream, _ []json.RawMessage) (any, *Error) { return u.genesisHash(), nil },
	"getVersion":           constant(map[string]any{"solana-core": "2.0.0-sim", "feature-set": 0}),
	"sendTransaction":      solSend,
	"simulateTransaction":  solSimulate,
	"isBlockhashValid":     solBlockhashValid,
	"getSignatureStatuses": solSignatureStatuses,
}

// solConfig is the config object a Solana read takes after its n
// positional parameters: the commitment and minContextSlot it names.
type solConfig struct {
	Commitment     string `json:"commitment"`
	MinContextSlot int64  `json:"minContextSlot"`
}

// solContext is the slot a read of args (n positional parameters, then the
// config) is answered at: the node's slot at the commitment asked, or
// -32016 when that is below the read's minContextSlot, as a real node
// answers it (the request's, until the node gets there).
func solContext(u *Upstream, args []json.RawMessage, n int) (int64, *Error) {
	var cfg solConfig
	if len(args) > n {
		_ = json.Unmarshal(args[n], &cfg)
	}
	slot := solSlotAt(u, cfg.Commitment)
	if cfg.MinContextSlot > slot {
		return 0, &Error{Code: CodeMinContextSlot, Message: "Minimum context slot has not been reached",
			Data: map[string]int64{"contextSlot": slot}}
	}
	return slot, nil
}

// solSlotAt is the node's slot at a commitment (finalized when none).
func solSlotAt(u *Upstream, commitment string) int64 {
	switch commitment {
	case "processed", "recent":
		return u.Head() + 32
	case "confirmed", "single", "singleGossip":
		return u.Head() + 31
	}
	return u.Head()
}

// CodeMinContextSlot is Solana's "Minimum context slot has not been reached".
const CodeMinContextSlot = -32016

// solSlot is the slot at the commitment asked. Finalized, a node's default,
// is the sim's head; confirmed and processed run ahead of it, as on a real
// validator, where finalization trails the tip by about 32 slots.
func solSlot(u *Upstream, args []json.RawMessage) (any, *Error) {
	return solContext(u, args, 0)
}

func solBlockHeight(u *Upstream, args []json.RawMessage) (any, *Error) {
	slot, err := solContext(u, args, 0)
	if err != nil {
		return nil, err
	}
	return blockHeight(slot), nil
}

// CodeBlockNotAvailable is Solana's "Block not available for slot N".
const CodeBlockNotAvailable = -32004

// solBlock is a slot's block, its blockhash and heights with no
// transactions, or -32004 for a slot beyond the node's slot at the
// commitment asked (finalized when none), as a real node answers it.
func solBlock(u *Upstream, args []json.RawMessage) (any, *Error) {
	var slot int64
	if len(args) == 0 || json.Unmarshal(args[0], &slot) != nil || slot < 1 {
		return nil, invalidParams("want [slot, config?]")
	}
	var cfg solConfig
	if len(args) > 1 {
		_ = json.Unmarshal(args[1], &cfg)
	}
	if slot > solSlotAt(u, cfg.Commitment) {
		return nil, &Error{Code: CodeBlockNotAvailable, Message: fmt.Sprintf("Block not available for slot %d", slot)}
	}
	return map[string]any{
		"blockhash":         blockhashOf(u, slot),
		"previousBlockhash": blockhashOf(u, slot-1),
		"parentSlot":        slot - 1,
		"blockHeight":       blockHeight(slot),
		"blockTime":         nil,
		"transactions":      []any{},
	}, nil
}

// blockHeight trails the slot because some slots are skipped: one in 25.
func blockHeight(slot int64) int64 { return slot - slot/25 }

func (u *Upstream) genesisHash() string {
	d := digest("genesis", u.cfg.ChainID)
	return base58(d[:])
}

func solHealth(u *Upstream, _ []json.RawMessage) (any, *Error) {
	u.mu.RLock()
	unhealthy, behind := u.set.unhealthy, max(u.trueHead()-u.headLocked(), 0)
	u.mu.RUnlock()
	if unhealthy {
		return nil, &Error{Code: CodeRateLimited, Message: "Node is unhealthy", Data: map[string]int64{"numSlotsBehind": behind}}
	}
	return "ok", nil
}

func withContext(slot int64, value any) map[string]any {
	return map[string]any{"context": map[string]any{"slot": slot, "apiVersion": "2.0.0"}, "value": value}
}

func solLatestBlockhash(u *Upstream, args []json.RawMessage) (any, *Error) {
	slot, err := solContext(u, args, 0)
	if err != nil {
		return nil, err
	}
	return withContext(slot, map[string]any{
		"blockhash":            blockhashOf(u, slot),
		"lastValidBlockHeight": blockHeight(slot) + 150,
	}), nil
}

func solAccountInfo(u *Upstream, args []json.RawMessage) (any, *Error) {
	key, ok := stringArg(args, 0)
	if !ok {
		return nil, invalidParams("want [pubkey, config?]")
	}
	slot, err := solContext(u, args, 1)
	if err != nil {
		return nil, err
	}
	return withContext(slot, map[string]any{
		"data":       []string{"", "base64"},
		"executable": false,
		"lamports":   lamports(u, key),
		"owner":      "11111111111111111111111111111111",
		"rentEpoch":  uint64(math.MaxUint64),
		"space":      0,
	}), nil
}

func solBalance(u *Upstream, args []json.RawMessage) (any, *Error) {
	key, ok := stringArg(args, 0)
	if !ok {
		return nil, invalidParams("want [pubkey, config?]")
	}
	slot, err := solContext(u, args, 1)
	if err != nil {
		return nil, err
	}
	return withContext(slot, lamports(u, key)), nil
}

func lamports(u *Upstream, key string) uint64 {
	return digestUint("lamports", u.cfg.ChainID, key) % 1e15
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58 encodes b the Bitcoin/Solana way (leading zero bytes become '1').
func base58(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	digits := make([]byte, 0, len(b)*138/100+1) // little-endian base-58 digits
	for _, c := range b[zeros:] {
		carry := int(c)
		for i := range digits {
			carry += int(digits[i]) << 8
			digits[i] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append(digits, byte(carry%58))
			carry /= 58
		}
	}
	out := make([]byte, zeros, zeros+len(digits))
	for i := range out {
		out[i] = '1'
	}
	for i := len(digits) - 1; i >= 0; i-- {
		out = append(out, base58Alphabet[digits[i]])
	}
	return string(out)
}
