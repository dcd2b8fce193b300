package probes

import "testing"

func TestChains_ParseIdentityAndHead(t *testing.T) {
	evm, _ := specFor("evm")
	sol, _ := specFor("solana")
	for _, c := range []struct {
		name  string
		parse func([]byte) (string, bool)
		body  string
		want  string
		ok    bool
	}{
		{"padded chain id", evm.parseIdentity, `{"jsonrpc":"2.0","id":1,"result":"0x01"}`, "0x1", true},
		{"upper-case hex", evm.parseIdentity, `{"jsonrpc":"2.0","id":1,"result":"0xA4B1"}`, "0xa4b1", true},
		{"error answer", evm.parseIdentity, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`, "", false},
		{"genesis", sol.parseIdentity, `{"jsonrpc":"2.0","id":1,"result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"}`, "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d", true},
		{"empty genesis", sol.parseIdentity, `{"jsonrpc":"2.0","id":1,"result":""}`, "", false},
	} {
		got, ok := c.parse([]byte(c.body))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %q %v, want %q %v", c.name, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		name  string
		parse func([]byte) (int64, bool)
		body  string
		want  int64
		ok    bool
	}{
		{"block number", evm.parseHead, `{"jsonrpc":"2.0","id":1,"result":"0x1b4"}`, 436, true},
		{"not hex", evm.parseHead, `{"jsonrpc":"2.0","id":1,"result":"436"}`, 0, false},
		{"slot", sol.parseHead, `{"jsonrpc":"2.0","id":1,"result":312000123}`, 312000123, true},
		{"slot as string", sol.parseHead, `{"jsonrpc":"2.0","id":1,"result":"1"}`, 0, false},
	} {
		got, ok := c.parse([]byte(c.body))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %d %v, want %d %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if _, err := specFor("bitcoin"); err == nil {
		t.Error("unknown chain kind accepted")
	}
}

func TestChains_DescribeIdentity(t *testing.T) {
	for in, want := range map[string]string{
		"0x1":     "0x1 (1)",
		"0xa4b1":  "0xa4b1 (42161)",
		"mainnet": `"mainnet"`,
	} {
		if got := describeChainID(in); got != want {
			t.Errorf("describeChainID(%q) = %q, want %q", in, got, want)
		}
	}
	if got := shortHash("5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"); got != "5eykt4Us…2N9d" {
		t.Errorf("shortHash = %q", got)
	}
	if got := shortHash("short"); got != "short" {
		t.Errorf("shortHash of a short string = %q", got)
	}
}

func TestChains_HealthVerdict(t *testing.T) {
	for _, c := range []struct {
		body           string
		healthy, known bool
		reason         string
	}{
		{`{"jsonrpc":"2.0","id":1,"result":"ok"}`, true, true, ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"Node is unhealthy","data":{"numSlotsBehind":42}}}`,
			false, true, "getHealth: Node is unhealthy (code -32005, 42 slots behind)"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"Node is behind by 42 slots"}}`,
			false, true, "getHealth: Node is behind by 42 slots (code -32005)"},
		{`{"jsonrpc":"2.0","id":1,"result":"behind"}`, false, true, `getHealth: answered "behind"`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, true, true, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"x":1}}`, false, false, ""},
		{`not json`, false, false, ""},
	} {
		healthy, reason, known := healthVerdict("getHealth", []byte(c.body))
		if healthy != c.healthy || known != c.known || reason != c.reason {
			t.Errorf("%s: got %v %v %q, want %v %v %q", c.body, healthy, known, reason, c.healthy, c.known, c.reason)
		}
	}
}
