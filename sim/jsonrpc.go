package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// JSON-RPC error codes used by the simulator.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	CodeServerError    = -32000 // e.g. filter not found
	CodeRateLimited    = -32005 // also Solana's node-unhealthy code
	CodeReverted       = 3
)

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// request is one decoded JSON-RPC call. invalid is set when the element
// could not be used; it is answered with that error.
type request struct {
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	invalid *Error
}

var nullID = json.RawMessage("null")

// decodeBody splits a body into calls. A nil error with batch=false means a
// single call; a non-nil error is a parse error for the whole body.
func decodeBody(body []byte) (reqs []request, batch bool, err *Error) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(body, &elems) != nil {
			return nil, false, &Error{Code: CodeParseError, Message: "parse error"}
		}
		if len(elems) == 0 {
			return []request{{invalid: &Error{Code: CodeInvalidRequest, Message: "empty batch"}}}, false, nil
		}
		reqs = make([]request, len(elems))
		for i, e := range elems {
			reqs[i] = decodeOne(e)
		}
		return reqs, true, nil
	}
	if !json.Valid(body) {
		return nil, false, &Error{Code: CodeParseError, Message: "parse error"}
	}
	return []request{decodeOne(body)}, false, nil
}

func decodeOne(raw []byte) request {
	var r request
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &r) != nil {
		return request{invalid: &Error{Code: CodeInvalidRequest, Message: "invalid request"}}
	}
	if r.Method == "" {
		r.invalid = &Error{Code: CodeInvalidRequest, Message: "invalid request: missing method"}
	}
	return r
}

// positional returns the params array; absent or null params are empty.
func positional(params json.RawMessage) ([]json.RawMessage, error) {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || bytes.Equal(p, nullID) {
		return nil, nil
	}
	var args []json.RawMessage
	if err := json.Unmarshal(p, &args); err != nil {
		return nil, errors.New("params must be an array")
	}
	return args, nil
}

// appendResponse writes one response object, echoing id byte for byte
// (encoding/json would re-escape it).
func appendResponse(buf *bytes.Buffer, id json.RawMessage, result any, rpcErr *Error) {
	if len(id) == 0 {
		id = nullID
	}
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	if rpcErr != nil {
		buf.WriteString(`,"error":`)
		writeJSON(buf, rpcErr)
	} else {
		buf.WriteString(`,"result":`)
		writeJSON(buf, result)
	}
	buf.WriteByte('}')
}

func writeJSON(buf *bytes.Buffer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(&Error{Code: CodeInternal, Message: "sim: cannot encode result"})
	}
	buf.Write(b)
}

// encodeResponses answers every call of a body, as an array for a batch.
func encodeResponses(reqs []request, batch bool, answer func(request) (any, *Error)) []byte {
	var buf bytes.Buffer
	if batch {
		buf.WriteByte('[')
	}
	for i, r := range reqs {
		if i > 0 {
			buf.WriteByte(',')
		}
		if r.invalid != nil {
			appendResponse(&buf, r.ID, nil, r.invalid)
			continue
		}
		res, err := answer(r)
		appendResponse(&buf, r.ID, res, err)
	}
	if batch {
		buf.WriteByte(']')
	}
	return buf.Bytes()
}

// encodeError answers a whole body with one error: per call for a batch.
func encodeError(reqs []request, batch bool, e *Error) []byte {
	if len(reqs) == 0 {
		var buf bytes.Buffer
		appendResponse(&buf, nil, nil, e)
		return buf.Bytes()
	}
	return encodeResponses(reqs, batch, func(request) (any, *Error) { return nil, e })
}
