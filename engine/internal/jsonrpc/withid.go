package jsonrpc

import "encoding/json"

// RawWithID is the request's raw object with its id replaced by id, every
// other member kept byte for byte: how a call goes out in an upstream
// batch beside another call bearing its id.
func (r *Request) RawWithID(id json.RawMessage) []byte {
	return replaceMembers(TrimSpace(r.Raw), keyID, id)
}

// WithResponseID is the answer object with its id replaced by id (the
// client's, put back in an answer to a call sent under another).
func WithResponseID(answer []byte, id json.RawMessage) []byte {
	return replaceMembers(TrimSpace(answer), keyID, id)
}

// replaceMembers is the object b with the value of every member named key
// (keyOf) replaced by v; b itself when it has none.
func replaceMembers(b []byte, key int, v []byte) []byte {
	if len(b) == 0 || b[0] != '{' {
		return b
	}
	var out []byte
	last := 0
	for it := (memberIter{b: b, i: 1}); it.next(); {
		if keyOf(b[it.ks:it.ke]) != key {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b)+len(v))
		}
		out = append(out, b[last:it.vs]...)
		out = append(out, v...)
		last = it.ve
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
