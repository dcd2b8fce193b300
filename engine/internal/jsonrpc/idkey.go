package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// maxIDZeros bounds the zeros CanonicalID writes out for a whole number
// with an exponent (1e40 is written out; 1e41 stays in scientific form).
const maxIDZeros = 40

// CanonicalID is the one spelling of a JSON-RPC id's value: two ids are the
// same id (SameID) exactly when their canonical spellings are equal. A
// whole number is its digits ("1.0", "1e0" and "1" are "1"), any other
// number "~" then its significant digits and exponent ("0.5" and "5e-1"
// are "~5e-1"), a string its quoted text with the fewest escapes; anything
// else is itself. Linear in the id's length: an id such as 1e999999 costs
// no more than its bytes (compared as exact rationals, one such pair took
// 40 ms, and a batch of them minutes). id must be valid JSON.
func CanonicalID(id json.RawMessage) string {
	if len(id) == 0 {
		return ""
	}
	if PlainID(id) {
		return string(id)
	}
	switch c := id[0]; {
	case c == '"':
		s, _ := decodeString(id)
		return string(appendString(nil, s))
	case c == '-' || c >= '0' && c <= '9':
		return canonicalNumber(id)
	}
	return string(id)
}

// PlainID says at a glance that id is its own canonical spelling: a whole
// number without sign, exponent or leading zero, or a string of valid
// UTF-8 without escapes. Such an id can be looked up as written.
func PlainID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		return bytes.IndexByte(id, '\\') < 0 && utf8.Valid(id)
	}
	if len(id) > 1 && id[0] == '0' {
		return false
	}
	for _, b := range id {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

func canonicalNumber(n []byte) string {
	neg := n[0] == '-'
	if neg {
		n = n[1:]
	}
	var digits []byte
	exp, i := 0, 0
	for ; i < len(n) && n[i] >= '0' && n[i] <= '9'; i++ {
		digits = append(digits, n[i])
	}
	if i < len(n) && n[i] == '.' {
		for i++; i < len(n) && n[i] >= '0' && n[i] <= '9'; i++ {
			digits = append(digits, n[i])
			exp--
		}
	}
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		e, err := strconv.Atoi(string(n[i+1:]))
		if err != nil || e > 1<<40 || e < -(1<<40) {
			return "~" + string(n) // an exponent past any use: only its own spelling
		}
		exp += e
	}
	digits = bytes.TrimLeft(digits, "0")
	if len(digits) == 0 {
		return "0" // -0 and 0.0e5 too
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if exp >= 0 && exp <= maxIDZeros {
		return sign + string(digits) + string(bytes.Repeat([]byte{'0'}, exp))
	}
	return "~" + sign + string(digits) + "e" + strconv.Itoa(exp)
}
