package sim

// Base58 encodes b the Bitcoin/Solana way, as the sims' own answers do:
// bench builds Solana account keys with it.
func Base58(b []byte) string { return base58(b) }
