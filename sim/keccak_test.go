package sim

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Ethereum's Keccak-256 (the original padding, not FIPS SHA3-256), as
// ethers.keccak256 computes it.
func TestKeccak256_KnownVectors(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470",
		"abc":                    "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45",
		strings.Repeat("a", 200): "96ea54061def936c4be90b518992fdc6f12f535068a256229aca54267b4d084d", // two blocks (ethers.keccak256)
	} {
		got := keccak256([]byte(in))
		if hex.EncodeToString(got[:]) != want {
			t.Errorf("keccak256(%q) = %x, want %s", in, got, want)
		}
	}
}

// eth_sendRawTransaction answers the signed transaction's hash, keccak256
// of its bytes, which ethers computes itself and compares with the node's
// answer ("@TODO: the returned hash did not match": every send to the sim
// failed in ethers, directly and through rpcdash).
func TestEVM_SendRawAnswersTheTransactionsHash(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	// Bytes shaped as a signed EIP-1559 transaction; the hash is ethers.keccak256's.
	const raw = "0x02f86b827a69808459682f00847735940082520894000000000000000000000000000000000000000180c001a0b2b8a7e6e0e5e59b5dd07e6e3d3e2a6f3c4f3f0b0a6b8b5f2b1f8ed1d7f9c6f2a04c1b8fb1fe3d1f2e5b9a9b1e8a5f4a0e3e2d1c0b9a8f7e6d5c4b3a29180706"
	var hash string
	result(t, c, u, &hash, "eth_sendRawTransaction", raw)
	if want := "0x4afb6485751c18f09388ba9db615e56a42f63ded7cf2e47281e833fc2924020e"; hash != want { // ethers.keccak256(raw)
		t.Fatalf("hash %s, want keccak256 of the transaction %s", hash, want)
	}
}
