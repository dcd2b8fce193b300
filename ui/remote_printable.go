package ui

import (
	"bytes"
	"encoding/json"

	"github.com/rpcdash/rpcdash/engine"
)

// printableJSON is an admin API's JSON answer with every string in it,
// object keys included, made fit for the terminal (engine.ShownText). The
// console draws what the instance it is attached to sends; that instance
// may not be rpcdash, and one that sends escape sequences in an endpoint
// name or an error would otherwise write them to the operator's terminal.
// Numbers are kept as written (UseNumber): counters pass 2^53.
func printableJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(printable(v))
}

func printable(v any) any {
	switch t := v.(type) {
	case string:
		return engine.ShownText(t)
	case []any:
		for i := range t {
			t[i] = printable(t[i])
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[engine.ShownText(k)] = printable(x)
		}
		return out
	}
	return v
}
