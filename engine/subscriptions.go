package engine

import (
	"bytes"
	"encoding/json"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// subscriptionError answers a subscription call with geth's code and words
// over HTTP (-32601 "notifications not supported", -32000 "subscription not
// found"), which clients already know, and says why. geth reads an
// unsubscribe's params before it looks the id up, and matches method names
// case for case: a malformed eth_unsubscribe is -32602 there and an
// oddly-cased one -32601, codes a client acts on, so they are kept.
func subscriptionError(method string, params json.RawMessage) *jsonrpc.Error {
	const why = ": rpcdash serves JSON-RPC over HTTP only, which has no subscriptions"
	if method != "eth_unsubscribe" {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "notifications not supported" + why}
	}
	if msg := unsubscribeParamsProblem(params); msg != "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeFilterGone, Message: "subscription not found" + why}
}

// unsubscribeParamsProblem is geth's complaint about eth_unsubscribe's
// params (one subscription id, a string), or "" when they are well formed.
func unsubscribeParamsProblem(params json.RawMessage) string {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		return "missing value for required argument 0"
	}
	var args []json.RawMessage
	if err := json.Unmarshal(params, &args); err != nil {
		return "non-array args"
	}
	switch {
	case len(args) > 1:
		return "too many arguments, want at most 1"
	case len(args) == 0 || bytes.Equal(bytes.TrimSpace(args[0]), []byte("null")):
		return "missing value for required argument 0"
	}
	var id string
	if json.Unmarshal(args[0], &id) != nil {
		return "invalid argument 0: a subscription id is a string"
	}
	return ""
}
