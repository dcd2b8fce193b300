package main

import (
	"strings"
	"testing"
	"time"
)

// A config error names a method's key as the file spells it: viper
// lower-cases keys, and [hedge.methods.eth_sendRawTransaction] came out as
// hedge.methods.eth_sendrawtransaction, a name the user never wrote
// (Ethereum and Solana method names are camelCase). Which configs load is
// unchanged: the tables are still matched without regard to case.
func TestConfig_ErrorsNameMethodKeysAsWritten(t *testing.T) {
	for _, c := range []struct{ method, body, want string }{
		{"eth_getBalance", "[Hedge.Methods.eth_getBalance]\ndelay = \"fast\"", `hedge.methods.eth_getBalance.delay: must be "auto" or a duration such as "120ms", got "fast"`},
		{"eth_sendRawTransaction", "[hedge.methods.eth_sendRawTransaction]\ndelay = \"10ms\"", `hedge.methods.eth_sendRawTransaction: eth_sendRawTransaction is a write: never hedged`},
		{"getSignaturesForAddress", "[hedge.methods.getSignaturesForAddress]\ndely = \"10ms\"", `unknown keys: hedge.methods.getSignaturesForAddress.dely (did you mean hedge.methods.getSignaturesForAddress.delay?)`},
		{"eth_getBlockReceipts", "[methods.weights]\neth_getBlockReceipts = \"heavy\"", `methods.weights.eth_getBlockReceipts: "heavy" is not a number`},
		{"eth_getBalance", "[methods]\nweights = { eth_getBalance = -1 }", `methods.weights.eth_getBalance: must be in (0, ∞), got -1`},
		{"debug_traceBlockByNumber", "[methods.timeouts]\ndebug_traceBlockByNumber = \"0s\"", `methods.timeouts.debug_traceBlockByNumber: must be a positive duration, got 0s`},
	} {
		code, _, stderr := serveConfig(t, loopbackServer+validEndpoint+c.body+"\n")
		if code == 0 || !strings.Contains(stderr, "\n  "+c.want+"\n") {
			t.Errorf("%s\nexit %d, error lacks %q:\n%s", c.body, code, c.want, stderr)
		}
		if strings.Contains(stderr, strings.ToLower(c.method)) {
			t.Errorf("%s\nthe method named in lower case:\n%s", c.body, stderr)
		}
	}

	cfg, err := loadConfig(writeConfig(t, validEndpoint+`
[hedge.methods.ETH_GETBALANCE]
delay = "10ms"
[methods.weights]
Eth_Call = 3
[methods.timeouts]
eth_getLogs = "5s"
`))
	if err != nil {
		t.Fatalf("a config matched without regard to case refused: %v", err)
	}
	if d := cfg.Hedge.Methods["eth_getbalance"].Delay; d != "10ms" || cfg.Methods.Weights["eth_call"] != 3 || cfg.Methods.Timeouts["eth_getlogs"] != 5*time.Second {
		t.Fatalf("values read: delay %q, weight %v, timeout %v", d, cfg.Methods.Weights["eth_call"], cfg.Methods.Timeouts["eth_getlogs"])
	}
}
