package probes

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// chainSpec is what differs between chain kinds: which method tells the
// chain apart, which one reports the head, and whether the node can say it
// is unhealthy.
type chainSpec struct {
	identityMethod string
	identityNoun   string // "chain id", "genesis hash"
	// parseIdentity returns a canonical form that compares equal for the
	// same chain.
	parseIdentity    func(body []byte) (string, bool)
	configKey        string // the config key that can fix the identity
	describeIdentity func(canonical string) string
	headMethod       string
	parseHead        func(body []byte) (int64, bool)
	healthMethod     string // "" = none
}

func specFor(kind string) (chainSpec, error) {
	switch kind {
	case "evm":
		return chainSpec{
			identityMethod: "eth_chainId", identityNoun: "chain id",
			parseIdentity: evmChainID, describeIdentity: describeChainID, configKey: "chain.chain_id",
			headMethod: "eth_blockNumber", parseHead: evmHead,
		}, nil
	case "solana":
		return chainSpec{
			identityMethod: "getGenesisHash", identityNoun: "genesis hash",
			parseIdentity: solanaGenesis, describeIdentity: shortHash, configKey: "chain.genesis_hash",
			headMethod: "getSlot", parseHead: solanaSlot,
			healthMethod: "getHealth",
		}, nil
	}
	return chainSpec{}, fmt.Errorf("probes: chain kind %q is not evm or solana", kind)
}

func parseHexUint(s string) (uint64, bool) {
	if len(s) < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:], 16, 64)
	return v, err == nil
}

// evmChainID canonicalises "0x01" and "0x1" alike as "0x1".
func evmChainID(body []byte) (string, bool) {
	s, ok := resultString(body)
	if !ok {
		return "", false
	}
	if v, ok := parseHexUint(s); ok {
		return "0x" + strconv.FormatUint(v, 16), true
	}
	return s, s != ""
}

func describeChainID(id string) string {
	if v, ok := parseHexUint(id); ok {
		return fmt.Sprintf("%s (%d)", id, v)
	}
	return strconv.Quote(id)
}

func evmHead(body []byte) (int64, bool) {
	s, ok := resultString(body)
	if !ok {
		return 0, false
	}
	v, ok := parseHexUint(s)
	if !ok || v > 1<<62 {
		return 0, false
	}
	return int64(v), true
}

func solanaGenesis(body []byte) (string, bool) {
	s, ok := resultString(body)
	return s, ok && s != ""
}

// shortHash keeps enough of a base58 hash to tell two apart in a message.
func shortHash(h string) string {
	if len(h) <= 14 {
		return h
	}
	return h[:8] + "…" + h[len(h)-4:]
}

func solanaSlot(body []byte) (int64, bool) {
	v, ok := resultUint64(body)
	if !ok || v > 1<<62 {
		return 0, false
	}
	return int64(v), true
}

// healthVerdict reads a getHealth answer: healthy, or the reason it is not.
// A body that is no getHealth answer at all says nothing (known = false).
// A node or a provider's gateway without the method answers it -32601:
// that says nothing against the node's health either, and its head is
// judged as any other's. Taken for "unhealthy", it kept such an endpoint
// out of rotation for good (and, with every endpoint so, the pool in panic
// routing), where its clients saw nothing wrong.
const methodNotFound = -32601 // JSON-RPC 2.0's "Method not found"

func healthVerdict(method string, body []byte) (healthy bool, reason string, known bool) {
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false, "", false
	}
	if e := msg.Error; e != nil {
		if e.Code == methodNotFound {
			return true, "", true
		}
		detail := fmt.Sprintf("code %d", e.Code)
		var data struct {
			Behind *int64 `json:"numSlotsBehind"`
		}
		if json.Unmarshal(e.Data, &data) == nil && data.Behind != nil {
			detail += fmt.Sprintf(", %d slots behind", *data.Behind)
		}
		return false, fmt.Sprintf("%s: %s (%s)", method, strings.TrimSpace(e.Message), detail), true
	}
	var s string
	if json.Unmarshal(msg.Result, &s) != nil {
		return false, "", false
	}
	if s == "ok" {
		return true, "", true
	}
	return false, fmt.Sprintf("%s: answered %q", method, s), true
}

// result is a JSON-RPC answer's result, when it has one and no error.
func result(body []byte) (json.RawMessage, bool) {
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.Result) == 0 || len(msg.Error) > 0 && string(msg.Error) != "null" {
		return nil, false
	}
	return msg.Result, true
}

// resultString is the result when it is a JSON string (eth_blockNumber's,
// eth_chainId's, getGenesisHash's).
func resultString(body []byte) (string, bool) {
	raw, ok := result(body)
	var s string
	return s, ok && json.Unmarshal(raw, &s) == nil
}

// resultUint64 is the result when it is a non-negative JSON integer
// (getSlot's).
func resultUint64(body []byte) (uint64, bool) {
	raw, ok := result(body)
	var n uint64
	return n, ok && json.Unmarshal(raw, &n) == nil
}
