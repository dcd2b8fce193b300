package sim

import "golang.org/x/crypto/sha3"

// keccak256 is Ethereum's hash (Keccak-256 with its original padding, not
// FIPS SHA3-256): a transaction's hash is keccak256 of its signed bytes,
// which clients compute themselves and compare with the node's answer
// (ethers: "the returned hash did not match").
func keccak256(data []byte) [32]byte {
	h := sha3.NewLegacyKeccak256()
	h.Write(data)
	var out [32]byte
	h.Sum(out[:0])
	return out
}
