package engine_test

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// Default is valid as soon as it has an endpoint, with hedging and probes
// on: the README's defaults.
func TestConfig_DefaultIsValidOnceItHasAnEndpoint(t *testing.T) {
	c := engine.Default()
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "endpoints:") {
		t.Fatalf("no endpoints: %v, want an error naming endpoints", err)
	}
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !c.Hedge.Enabled || !c.Probes.Enabled || c.Demo.Enabled {
		t.Errorf("hedge.enabled %v, probes.enabled %v, demo.enabled %v: want on, on, off", c.Hedge.Enabled, c.Probes.Enabled, c.Demo.Enabled)
	}
}

// Validate names every invalid key at once, section by section, and New
// refuses the same config with the same message.
func TestConfig_ValidateReportsEveryInvalidKey(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "ftp://x"}, {Name: "a", URL: "http://127.0.0.1:1"}}
	c.Server.MaxBatch = 0
	c.Chain.Kind = "btc"
	c.Hedge.Quantile = 2
	c.Breaker.Failures = 0
	c.Router.PanicThreshold = -1
	c.Probes.Recover = 0
	c.Demo.Rate = 1000
	c.UI.Refresh = 0
	c.Methods.Weights = map[string]float64{"eth_call": -1}
	want := []string{"server.max_batch", "chain.kind", "endpoints[0].url", "endpoints[1].name", "hedge.quantile",
		"breaker.failures", "router.panic_threshold", "probes.recover", "demo.rate", "ui.refresh", "methods.weights.eth_call"}
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if lines[0] != "invalid config:" || len(lines) != len(want)+1 {
		t.Fatalf("want one line per key after \"invalid config:\", got:\n%v", err)
	}
	for i, key := range want {
		if !strings.HasPrefix(lines[i+1], "  "+key+": ") {
			t.Errorf("line %d = %q, want %s first", i+1, lines[i+1], key)
		}
	}
	if _, nerr := engine.New(c, engine.Options{}); nerr == nil || nerr.Error() != err.Error() {
		t.Errorf("New: %v, want the same error", nerr)
	}
}

// A zero set explicitly stays zero: New applies no defaults of its own.
func TestConfig_NewKeepsExplicitZeros(t *testing.T) {
	c := engine.Default()
	c.Server.Listen, c.Server.Admin = "127.0.0.1:0", "127.0.0.1:0"
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	c.Hedge.MaxExtra, c.Chain.MaxHeadLag, c.Hedge.Budget = 0, 0, 0
	e, err := engine.New(c, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Config(); got.Hedge.MaxExtra != 0 || got.Chain.MaxHeadLag != 0 || got.Hedge.Budget != 0 {
		t.Errorf("explicit zeros replaced: max_extra %d, max_head_lag %d, budget %v", got.Hedge.MaxExtra, got.Chain.MaxHeadLag, got.Hedge.Budget)
	}
}

// A write listed as a read would be hedged and sent twice; a filter method
// listed as a write would lose its pinning: both are refused, naming the key.
func TestConfig_MethodListsNeverLoosenABuiltInClass(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	c.Methods.Reads = []string{"eth_sendRawTransaction", "eth_newFilter", "mev_sendBundle"}
	c.Methods.Writes = []string{"eth_uninstallFilter", "eth_call"}
	c.Demo.Mix = []string{"eth_blockNumber"} // not the default mix, which has eth_call
	err := c.Validate()
	want := []string{
		"methods.reads: eth_sendRawTransaction is a write",
		"methods.reads: eth_newFilter is stateful",
		"methods.writes: eth_uninstallFilter is stateful",
	}
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")[1:]
	if len(lines) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), w) {
			t.Errorf("problem %d = %q, want it to start %q", i, lines[i], w)
		}
	}
}

// [[endpoints]] role is "primary" (the default when left out), "standby",
// "shadow" or "canary"; anything else stops start-up naming the key.
func TestConfig_EndpointRoleIsOneOfTheFourRoles(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{
		{Name: "a", URL: "http://127.0.0.1:1"},
		{Name: "b", URL: "http://127.0.0.1:2", Role: "primary"},
		{Name: "c", URL: "http://127.0.0.1:3", Role: "standby"},
		{Name: "d", URL: "http://127.0.0.1:4", Role: "shadow"},
		{Name: "e", URL: "http://127.0.0.1:5", Role: "canary"},
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("every role and no role: %v", err)
	}
	c.Endpoints[2].Role = "backup"
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), `endpoints[2].role: must be "primary", "standby", "shadow" or "canary", got "backup"`) {
		t.Fatalf("role \"backup\": %v, want an error naming endpoints[2].role", err)
	}
	if _, nerr := engine.New(c, engine.Options{}); nerr == nil || !strings.Contains(nerr.Error(), "endpoints[2].role") {
		t.Errorf("New: %v, want the same error", nerr)
	}
	t.Log(err)
}

// Hedging settings for a method that is never hedged would be kept and
// never used: a start-up error naming the key.
func TestConfig_HedgeMethodsRefusesNeverHedgedMethods(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	c.Methods.NoHedge = []string{"eth_getLogs"}
	c.Hedge.Methods = map[string]engine.HedgeMethodConfig{
		"eth_call": {Delay: "20ms"}, "eth_sendrawtransaction": {Delay: "20ms"},
		"mev_sendBundle": {Delay: "20ms"}, "eth_getLogs": {Delay: "20ms"},
	}
	err := c.Validate()
	want := "invalid config:\n" +
		"  hedge.methods.eth_getLogs: eth_getLogs is in methods.no_hedge: never hedged\n" +
		"  hedge.methods.eth_sendrawtransaction: eth_sendrawtransaction is a write: never hedged\n" +
		"  hedge.methods.mev_sendBundle: mev_sendBundle is in no method table, so it is sent once like a write (methods.reads makes it a read): never hedged"
	if err == nil || err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
	}
}

// A listen or admin address whose port cannot be bound is refused by
// Validate, naming its key, rather than at bind, where only the first was
// reported; what net.Listen takes (0, a service name, an empty port) passes.
func TestConfig_ListenAndAdminPortsAreChecked(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	c.Server.Listen, c.Server.Admin = "127.0.0.1:abc", "127.0.0.1:99999"
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`server.listen: the port of "127.0.0.1:abc" is not a number from 0 to 65535`,
		`server.admin: the port of "127.0.0.1:99999" is not a number from 0 to 65535`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("want the two addresses' errors only (no loopback or token error for them):\n%v", err)
	}
	for _, addr := range []string{"127.0.0.1:0", "127.0.0.1:", "localhost:http", "[::1]:65535"} {
		c.Server.Listen, c.Server.Admin = addr, "127.0.0.1:0"
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

// chain.pin takes "off", the default the README documents (it was refused:
// `"off" is not a finality level`), and a bad level is refused with the
// levels chain.kind takes.
func TestConfig_PinTakesOffAndNamesTheLevelsOfTheChain(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	c.Chain.Pin = "off"
	if err := c.Validate(); err != nil {
		t.Fatalf("chain.pin = \"off\": %v", err)
	}
	for _, tc := range []struct{ kind, pin, want string }{
		{"evm", "confirmed", `chain.pin: "confirmed" is not a finality level for chain.kind "evm": it takes "finalized", "safe" or "off"`},
		{"solana", "safe", `chain.pin: "safe" is not a finality level for chain.kind "solana": it takes "finalized", "confirmed" or "off"`},
	} {
		c.Chain.Kind, c.Chain.Pin = tc.kind, tc.pin
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s pin %q: %v, want %q", tc.kind, tc.pin, err, tc.want)
		}
	}
}

// An endpoint's name, provider and region are shown as they are (console,
// rpcdash status, logs, metrics labels): one holding an escape sequence or
// a newline is refused naming its key, and the error shows it defused. A
// name "be\x1b[31mRED\nta" turned rpcdash status red and split its row.
func TestConfig_EndpointLabelsArePrintable(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{
		{Name: "be\x1b[31mRED\nta", URL: "http://127.0.0.1:1"},
		{Name: "b", URL: "http://127.0.0.1:2", Provider: "p\x07", Region: "us\twest"},
		{Name: "γ", URL: "http://127.0.0.1:3", Provider: "Provider One", Region: "eu-west é"},
	}
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, key := range []string{"endpoints[0].name", "endpoints[1].provider", "endpoints[1].region"} {
		if !strings.Contains(err.Error(), "  "+key+": ") {
			t.Errorf("error lacks %s:\n%v", key, err)
		}
	}
	if strings.ContainsAny(err.Error(), "\x1b\x07\t") || strings.Contains(err.Error(), "endpoints[2]") {
		t.Errorf("error shows a control character, or refuses printable labels:\n%q", err)
	}
}

// server.admin on server.listen's address is a config error naming it: it
// failed at bind, "address already in use", which sent the operator
// looking for another process. Port 0 (the system picks) never clashes.
func TestConfig_AdminOnTheListenAddressIsRefused(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	for _, pair := range [][2]string{{"127.0.0.1:8545", "127.0.0.1:8545"}, {"LOCALHOST:9000", "localhost:9000"}} {
		c.Server.Listen, c.Server.Admin = pair[0], pair[1]
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "  server.admin: ") || !strings.Contains(err.Error(), "server.listen") {
			t.Errorf("listen %s, admin %s: %v; want an error naming server.admin", pair[0], pair[1], err)
		}
	}
	for _, pair := range [][2]string{{"127.0.0.1:0", "127.0.0.1:0"}, {"127.0.0.1:", "127.0.0.1:"}, {"127.0.0.1:8545", "127.0.0.1:8546"}, {"127.0.0.1:8545", "[::1]:8545"}} {
		c.Server.Listen, c.Server.Admin = pair[0], pair[1]
		if err := c.Validate(); err != nil {
			t.Errorf("listen %s, admin %s: %v", pair[0], pair[1], err)
		}
	}
}

// A proxy's port is checked as an endpoint URL's is: 99999 passed, and
// every probe and attempt then failed "proxyconnect: … invalid port". A
// token holding a control character passed too, and no request could carry
// it (Go's server refuses such a header): the admin API refused every call.
func TestConfig_ProxyPortAndAdminTokenCharactersAreChecked(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{
		{Name: "a", URL: "http://127.0.0.1:1", Proxy: "http://u:PROXYSECRET55@127.0.0.1:99999"},
		{Name: "b", URL: "http://127.0.0.1:2", Proxy: "socks5://127.0.0.1:0"},
		{Name: "c", URL: "http://127.0.0.1:3", Proxy: "http://127.0.0.1:"},
		{Name: "d", URL: "http://127.0.0.1:4", Proxy: "http://127.0.0.1:3128"},
	}
	c.Server.AdminToken = "SECRETTOKEN77\x01"
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"endpoints[0].proxy: port 99999 is outside 1-65535",
		"endpoints[1].proxy: port 0 is outside 1-65535",
		"endpoints[2].proxy: has an empty port",
		"server.admin_token: holds a control character",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "endpoints[3]") {
		t.Errorf("a proxy with a good port is refused:\n%v", err)
	}
	for _, secret := range []string{"PROXYSECRET55", "SECRETTOKEN77"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %s:\n%v", secret, err)
		}
	}
}
