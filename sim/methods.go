package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// method answers one call with its positional params.
type method func(u *Upstream, args []json.RawMessage) (any, *Error)

func (u *Upstream) answer(r request) (any, *Error) {
	table := evmMethods
	if u.cfg.Chain == ChainSolana {
		table = solanaMethods
	}
	m, ok := table[r.Method]
	if !ok {
		return nil, &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("the method %s does not exist/is not available", r.Method)}
	}
	args, err := positional(r.Params)
	if err != nil {
		return nil, invalidParams(err.Error())
	}
	return m(u, args)
}

func isWrite(chain, method string) bool {
	if chain == ChainSolana {
		return method == "sendTransaction"
	}
	return method == "eth_sendRawTransaction" || method == "eth_sendTransaction"
}

func invalidParams(msg string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "invalid params: " + msg}
}

// stringArg decodes args[i] as a JSON string.
func stringArg(args []json.RawMessage, i int) (string, bool) {
	if i >= len(args) {
		return "", false
	}
	var s string
	if json.Unmarshal(args[i], &s) != nil {
		return "", false
	}
	return s, true
}

// digest is the simulator's stand-in for a real hash: deterministic in its
// inputs and different across them.
func digest(parts ...any) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func digestUint(parts ...any) uint64 {
	d := digest(parts...)
	return binary.BigEndian.Uint64(d[:8])
}
