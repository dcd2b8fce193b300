package sim

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
)

// A real node checks a transaction's recent blockhash against its bank at
// the preflight commitment before it forwards the transaction: a blockhash
// it has not seen yet (minted by a node ahead of it) or one too old fails
// preflight with -32002, and the transaction is not sent. The sim knows its
// own blockhashes (one per slot, see solLatestBlockhash); a transaction
// that does not parse, or whose blockhash is none of the sim's, is taken
// as before, so that tests sending placeholder bytes keep working.

// blockhashValidSlots is how many slots a blockhash stays valid (the
// lastValidBlockHeight getLatestBlockhash gives is its height + 150).
const blockhashValidSlots = 150

// blockhashScanAhead is how far beyond its own slot the sim looks for a
// blockhash it has not made yet.
const blockhashScanAhead = 64

func blockhashOf(u *Upstream, slot int64) string {
	d := digest("blockhash", u.cfg.ChainID, slot)
	return base58(d[:])
}

// blockhashSlot is the slot the sim made blockhash at, searched from
// blockhashValidSlots × 2 before at to blockhashScanAhead after it.
func blockhashSlot(u *Upstream, blockhash string, at int64) (int64, bool) {
	for s := at + blockhashScanAhead; s >= max(at-2*blockhashValidSlots, 0); s-- {
		if blockhashOf(u, s) == blockhash {
			return s, true
		}
	}
	return 0, false
}

// blockhashValid says whether a blockhash of slot is valid at slot at.
func blockhashValid(slot, at int64) bool { return slot <= at && at-slot <= blockhashValidSlots }

// solSend answers a transaction's signature, or the preflight failure a
// node gives for a blockhash it does not have.
func solSend(u *Upstream, args []json.RawMessage) (any, *Error) {
	if len(args) == 0 {
		return nil, invalidParams("want [transaction, config?]")
	}
	var cfg struct {
		Encoding            string `json:"encoding"`
		SkipPreflight       bool   `json:"skipPreflight"`
		PreflightCommitment string `json:"preflightCommitment"`
	}
	if len(args) > 1 {
		_ = json.Unmarshal(args[1], &cfg)
	}
	if !cfg.SkipPreflight {
		if bh, ok := txBlockhash(args[0], cfg.Encoding); ok {
			at := solSlotAt(u, cfg.PreflightCommitment)
			if slot, known := blockhashSlot(u, bh, at); known && !blockhashValid(slot, at) {
				return nil, &Error{Code: -32002, Message: "Transaction simulation failed: Blockhash not found",
					Data: map[string]any{"accounts": nil, "err": "BlockhashNotFound", "innerInstructions": nil,
						"logs": []string{}, "replacementBlockhash": nil, "returnData": nil, "unitsConsumed": 0}}
			}
		}
	}
	sig, ok := txSignature(args[0], cfg.Encoding)
	if !ok { // placeholder bytes some tests send
		d := sha512.Sum512(append([]byte("sig\x00"), args[0]...))
		sig = base58(d[:])
	}
	landedSigs.add(sig, solSlotAt(u, "processed"))
	return sig, nil
}

// txBytes decodes a serialized transaction, a JSON string: base58 unless
// encoding says base64.
func txBytes(raw json.RawMessage, encoding string) ([]byte, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	var b []byte
	var err error
	if encoding == "base64" {
		b, err = base64.StdEncoding.DecodeString(s)
	} else {
		b, err = unbase58(s)
	}
	return b, err == nil
}

// txBlockhash reads the recent blockhash of a serialized transaction (a
// JSON string, base58 unless encoding says base64): compact-u16 signature
// count and signatures, the message (a version byte first for v0), its
// 3-byte header, compact-u16 account count and keys, then the blockhash.
func txBlockhash(raw json.RawMessage, encoding string) (string, bool) {
	b, ok := txBytes(raw, encoding)
	if !ok {
		return "", false
	}
	i := 0
	take := func(n int) bool { i += n; return n >= 0 && i <= len(b) }
	sigs, ok := compactU16(b, &i)
	if !ok || sigs == 0 || !take(64*sigs) || i >= len(b) {
		return "", false
	}
	if b[i]&0x80 != 0 {
		i++ // versioned message
	}
	if !take(3) {
		return "", false
	}
	keys, ok := compactU16(b, &i)
	if !ok || keys == 0 || !take(32*keys) || !take(32) {
		return "", false
	}
	return base58(b[i-32 : i]), true
}

func compactU16(b []byte, i *int) (int, bool) {
	v := 0
	for k := 0; k < 3; k++ {
		if *i >= len(b) {
			return 0, false
		}
		c := b[*i]
		*i++
		v |= int(c&0x7f) << (7 * k)
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}

type base58Error struct{}

func (base58Error) Error() string { return "not base58" }

// unbase58 decodes the Bitcoin/Solana base58 alphabet.
func unbase58(s string) ([]byte, error) {
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	var out []byte // big-endian
	for _, c := range []byte(s[zeros:]) {
		d := -1
		for k := range len(base58Alphabet) {
			if base58Alphabet[k] == c {
				d = k
				break
			}
		}
		if d < 0 {
			return nil, base58Error{}
		}
		carry := d
		for k := len(out) - 1; k >= 0; k-- {
			carry += int(out[k]) * 58
			out[k] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			out = append([]byte{byte(carry)}, out...)
			carry >>= 8
		}
	}
	return append(make([]byte, zeros), out...), nil
}

// SolanaTransaction is a serialized legacy transaction naming blockhash
// (one zero signature, one account, no instructions), base64-encoded as
// clients send it: enough for a node's preflight to read its blockhash.
func SolanaTransaction(blockhash string) (string, error) {
	bh, err := unbase58(blockhash)
	if err != nil {
		return "", err
	}
	if len(bh) != 32 {
		return "", base58Error{}
	}
	b := append([]byte{1}, make([]byte, 64)...)
	b = append(b, 1, 0, 0, 1)
	b = append(b, make([]byte, 32)...)
	b = append(b, bh...)
	b = append(b, 0)
	return base64.StdEncoding.EncodeToString(b), nil
}

// solBlockhashValid answers whether the node's bank at the commitment asked
// holds the blockhash: false for one it has not made yet, one expired, or
// one it never made.
func solBlockhashValid(u *Upstream, args []json.RawMessage) (any, *Error) {
	bh, ok := stringArg(args, 0)
	if !ok {
		return nil, invalidParams("want [blockhash, config?]")
	}
	at, err := solContext(u, args, 1)
	if err != nil {
		return nil, err
	}
	slot, known := blockhashSlot(u, bh, at)
	return withContext(at, known && blockhashValid(slot, at)), nil
}

// solSimulate simulates a transaction as far as its blockhash: err
// "BlockhashNotFound" for one the bank at the commitment asked does not
// hold (unless replaceRecentBlockhash), else success. A transaction that
// does not parse, or names none of the sim's blockhashes, succeeds.
func solSimulate(u *Upstream, args []json.RawMessage) (any, *Error) {
	if len(args) == 0 {
		return nil, invalidParams("want [transaction, config?]")
	}
	var cfg struct {
		Encoding               string `json:"encoding"`
		ReplaceRecentBlockhash bool   `json:"replaceRecentBlockhash"`
	}
	if len(args) > 1 {
		_ = json.Unmarshal(args[1], &cfg)
	}
	at, err := solContext(u, args, 1)
	if err != nil {
		return nil, err
	}
	value := map[string]any{"accounts": nil, "err": nil, "innerInstructions": nil, "logs": []string{},
		"replacementBlockhash": nil, "returnData": nil, "unitsConsumed": 150}
	if cfg.ReplaceRecentBlockhash {
		value["replacementBlockhash"] = map[string]any{"blockhash": blockhashOf(u, at), "lastValidBlockHeight": blockHeight(at) + blockhashValidSlots}
	} else if bh, ok := txBlockhash(args[0], cfg.Encoding); ok {
		if slot, known := blockhashSlot(u, bh, at); known && !blockhashValid(slot, at) {
			value["err"], value["unitsConsumed"] = "BlockhashNotFound", 0
		}
	}
	return withContext(at, value), nil
}

// txSignature is a serialized transaction's first signature, base58: the
// signature a node answers sendTransaction with, and the one a client
// computes on its own (web3.js, @solana/kit) to confirm it.
func txSignature(raw json.RawMessage, encoding string) (string, bool) {
	b, ok := txBytes(raw, encoding)
	if !ok {
		return "", false
	}
	i := 0
	sigs, ok := compactU16(b, &i)
	if !ok || sigs == 0 || i+64 > len(b) {
		return "", false
	}
	return base58(b[i : i+64]), true
}
