package jsonrpc

// RewriteErrorText returns answer with every string inside its "error"
// member passed through f (the message, and any string in data), and true
// when one changed. Everything else, the id, numbers and the members'
// order, is kept byte for byte. answer must be valid JSON.
func RewriteErrorText(answer []byte, f func(string) string) ([]byte, bool) {
	b := TrimSpace(answer)
	if len(b) == 0 || b[0] != '{' {
		return answer, false
	}
	for it := (memberIter{b: b, i: 1}); it.next(); {
		if keyOf(b[it.ks:it.ke]) != keyError {
			continue
		}
		v, changed := mapStrings(b[it.vs:it.ve], f)
		if !changed {
			return answer, false
		}
		out := make([]byte, 0, len(b)-(it.ve-it.vs)+len(v))
		out = append(out, b[:it.vs]...)
		out = append(out, v...)
		return append(out, b[it.ve:]...), true
	}
	return answer, false
}

// mapStrings returns the JSON value v with each string in it (keys too)
// passed through f. In valid JSON a quote outside a string always opens
// one, so a scan from quote to quote finds them all.
func mapStrings(v []byte, f func(string) string) ([]byte, bool) {
	var out []byte
	copied := 0
	for i := 0; i < len(v); i++ {
		if v[i] != '"' {
			continue
		}
		end := skipString(v, i)
		s, ok := decodeString(v[i:end])
		if ok {
			if t := f(s); t != s {
				out = append(out, v[copied:i]...)
				out = appendString(out, t)
				copied = end
			}
		}
		i = end - 1
	}
	if out == nil {
		return v, false
	}
	return append(out, v[copied:]...), true
}
