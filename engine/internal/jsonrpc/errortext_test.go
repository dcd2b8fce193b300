package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRewriteErrorText_OnlyTheErrorsStringsChange(t *testing.T) {
	hide := func(s string) string { return strings.ReplaceAll(s, "KEY123", "REDACTED") }
	cases := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"bad key KEY123"}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"bad key REDACTED"}}`},
		// data of any shape; numbers, the id and the order kept byte for byte
		{`{"id":"KEY123","error":{"data":{"url":"/v3/KEY123","n":12345678901234567890,"list":["x","KEY123\"q"]},"message":"m","code":1.0}, "jsonrpc":"2.0"}`,
			`{"id":"KEY123","error":{"data":{"url":"/v3/REDACTED","n":12345678901234567890,"list":["x","REDACTED\"q"]},"message":"m","code":1.0}, "jsonrpc":"2.0"}`},
		// escaped text is matched decoded and written back escaped
		{`{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"K\u0045Y123 \n<b>"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"REDACTED \n<b>"}}`},
	}
	for _, c := range cases {
		got, changed := RewriteErrorText([]byte(c.in), hide)
		if !changed || string(got) != c.want {
			t.Errorf("%s\n got %s (changed %v)\nwant %s", c.in, got, changed, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("invalid JSON: %s", got)
		}
	}
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"result":"KEY123"}`, // a result is the client's data
		`{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"fine"}}`,
		`[{"jsonrpc":"2.0","id":1,"error":{"message":"KEY123"}}]`, // not one answer
	} {
		if got, changed := RewriteErrorText([]byte(in), hide); changed || string(got) != in {
			t.Errorf("%s: changed to %s", in, got)
		}
	}
}
