package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The scanner below walks JSON already checked by json.Valid; it finds
// value boundaries without decoding. It never indexes out of range, even on
// invalid input.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func TrimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// skipString returns the index just past the string opened at b[i].
func skipString(b []byte, i int) int {
	start := i + 1
	i = start
	for i < len(b) {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		k := i
		for k > start && b[k-1] == '\\' {
			k--
		}
		i++
		if (i-1-k)%2 == 0 {
			return i
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// memberIter walks an object's members; start it with i just past '{'.
// After next returns true, b[ks:ke] is the quoted key, b[vs:ve] the value.
type memberIter struct {
	b                 []byte
	i, ks, ke, vs, ve int
}

func (it *memberIter) next() bool { return it.nextKey() && it.skipValue() }

// nextKey reads the next member up to its value: b[ks:ke] is the quoted
// key, vs where the value starts. skipValue then moves past the value.
func (it *memberIter) nextKey() bool {
	b := it.b
	i := skipSpace(b, it.i)
	if i < len(b) && b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	if i >= len(b) || b[i] != '"' {
		return false
	}
	it.ks = i
	i = skipString(b, i)
	it.ke = i
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return false
	}
	it.vs = skipSpace(b, i+1)
	it.i = it.vs
	return true
}

func (it *memberIter) skipValue() bool {
	it.ve = skipValue(it.b, it.vs)
	it.i = it.ve
	return it.ve > it.vs
}

// arrayIter walks an array's elements; start it with i just past '['.
type arrayIter struct {
	b         []byte
	i, vs, ve int
}

func (it *arrayIter) next() bool {
	b := it.b
	i := skipSpace(b, it.i)
	if i < len(b) && b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	if i >= len(b) || b[i] == ']' {
		return false
	}
	it.vs = i
	it.ve = skipValue(b, i)
	it.i = it.ve
	return it.ve > it.vs
}

const (
	keyOther = iota
	keyJSONRPC
	keyID
	keyMethod
	keyParams
	keyResult
	keyError
	keyCode
	keyMessage
)

// keyOf names a quoted member key. Keys are matched exactly (JSON-RPC is
// case-sensitive), after unescaping.
func keyOf(quoted []byte) int {
	if len(quoted) < 2 {
		return keyOther
	}
	k := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(k, '\\') >= 0 {
		s, ok := decodeString(quoted)
		if !ok {
			return keyOther
		}
		k = []byte(s)
	}
	switch string(k) {
	case "jsonrpc":
		return keyJSONRPC
	case "id":
		return keyID
	case "method":
		return keyMethod
	case "params":
		return keyParams
	case "result":
		return keyResult
	case "error":
		return keyError
	case "code":
		return keyCode
	case "message":
		return keyMessage
	}
	return keyOther
}

// requestMembers are the members a request is read by.
var requestMembers = [...]string{"jsonrpc", "id", "method", "params"}

// foldedMember says whether a quoted key that is not a request member
// matches one under Unicode case folding ("Method", "ID", "paramſ"), as
// Go's encoding/json matches keys; k is the key, unescaped (only letters
// fold to these names, so it is safe to quote).
func foldedMember(quoted []byte) (k string, ok bool) {
	if len(quoted) > 2+4*len("jsonrpc")+8 { // room for escapes and multi-byte folds
		return "", false
	}
	s, valid := decodeString(quoted)
	if !valid {
		return "", false
	}
	if foldedName(s) == "" {
		return "", false
	}
	return s, true
}

// foldedName is the request member k folds to, or "".
func foldedName(k string) string {
	for _, m := range requestMembers {
		if strings.EqualFold(k, m) {
			return m
		}
	}
	return ""
}

// decodeString decodes a JSON string value; invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func decodeString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	if s := v[1 : len(v)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// parseInt parses a JSON integer that fits an int; fractions and exponents
// are refused.
func parseInt(v []byte) (int, bool) {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// ArrayElements returns the elements of a JSON array (slices of b), or
// nil when b is not one. b must be valid JSON.
func ArrayElements(b []byte) [][]byte {
	b = TrimSpace(b)
	if len(b) == 0 || b[0] != '[' {
		return nil
	}
	var out [][]byte
	for it := (arrayIter{b: b, i: 1}); it.next(); {
		out = append(out, b[it.vs:it.ve])
	}
	return out
}
