package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// compareAnswers is the outcome of a shadow's answer against the client's
// (shadow nil: the shadow failed, with no JSON-RPC answer). Results are
// compared as JSON values, so key order and whitespace do not matter; the
// same bytes match without decoding either. JSON-RPC errors on both sides
// match when their codes do; a result on one side and an error or a
// failure on the other is an error. Results that differ on a read of a
// moving block are a tip outcome: both may be right. client is the
// client's answer decoded (once per read, however many shadows).
func compareAnswers(client *clientAnswer, shadow []byte, moving bool) string {
	if shadow == nil {
		return shadowError
	}
	if sr, sErr, ok := jsonrpc.Result(shadow); ok && !sErr && client.raw != nil && bytes.Equal(client.raw, sr) {
		return shadowMatch
	}
	c, ok := client.decoded()
	if !ok {
		return shadowError
	}
	s, ok := decodeAnswer(shadow)
	if !ok {
		return shadowError
	}
	switch {
	case c.isErr && s.isErr:
		if c.code == s.code {
			return shadowMatch
		}
		return shadowMismatch
	case c.isErr != s.isErr:
		return shadowError
	case sameJSON(c.result, s.result):
		return shadowMatch
	case moving:
		return shadowTip
	}
	return shadowMismatch
}

// clientAnswer is the answer a read's client got, as its mirrors compare
// with it: the result's bytes, and the answer decoded once, by the first
// mirror that needs it.
type clientAnswer struct {
	body  []byte
	raw   []byte // the result as the client got it; nil for an error answer
	once  sync.Once
	parts answerParts
	ok    bool
}

func newClientAnswer(body []byte) *clientAnswer {
	c := &clientAnswer{body: body}
	if r, isErr, ok := jsonrpc.Result(body); ok && !isErr {
		c.raw = r
	}
	return c
}

func (c *clientAnswer) decoded() (answerParts, bool) {
	c.once.Do(func() { c.parts, c.ok = decodeAnswer(c.body) })
	return c.parts, c.ok
}

type answerParts struct {
	result  json.RawMessage
	isErr   bool
	code    int
	message string
}

func decodeAnswer(b []byte) (answerParts, bool) {
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &env) != nil {
		return answerParts{}, false
	}
	if env.Error != nil {
		return answerParts{isErr: true, code: env.Error.Code, message: env.Error.Message}, true
	}
	if env.Result == nil {
		return answerParts{}, false
	}
	return answerParts{result: env.Result}, true
}

// sameJSON compares two JSON values semantically (numbers by their text).
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, okA := decodeValue(a)
	vb, okB := decodeValue(b)
	return okA && okB && reflect.DeepEqual(va, vb)
}

func decodeValue(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}
