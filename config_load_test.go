package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// chain.chain_id = -1 used to decode to 0xffffffffffffffff and exclude
// every endpoint as wrong-chain; a fraction was cut to a whole number.
// Both are start-up errors naming the key; 0 still means "the majority".
func TestLoadConfig_ChainIDOutOfRangeIsAnError(t *testing.T) {
	for body, want := range map[string]string{
		"[chain]\nchain_id = -1\n":          `chain.chain_id: -1 is not a chain id`,
		"[chain]\nchain_id = 1.5\n":         `chain.chain_id: 1.5 is not a chain id`,
		"[chain]\nchain_id = \"mainnet\"\n": `chain.chain_id: "mainnet" is not a chain id`,
		"[breaker]\nfailures = 2.5\n":       `breaker.failures: 2.5 is not a whole number`,
	} {
		_, err := loadConfig(writeConfig(t, loopbackServer+body+validEndpoint))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v\nwant %q", body, err, want)
		}
	}
	for body, want := range map[string]uint64{"": 0, "[chain]\nchain_id = 0\n": 0, "[chain]\nchain_id = 137\n": 137} {
		cfg, err := loadConfig(writeConfig(t, loopbackServer+body+validEndpoint))
		if err != nil || cfg.Chain.ChainID != want {
			t.Errorf("%q: chain_id %d, %v; want %d", body, cfg.Chain.ChainID, err, want)
		}
	}
	t.Setenv("RPCDASH_CHAIN_CHAIN_ID", "-1")
	_, err := loadConfig(writeConfig(t, loopbackServer+validEndpoint))
	if err == nil || !strings.Contains(err.Error(), "chain.chain_id (from RPCDASH_CHAIN_CHAIN_ID)") {
		t.Errorf("RPCDASH_CHAIN_CHAIN_ID=-1: %v", err)
	}
}

// Every error of a config is reported at once, decode errors and invalid
// values alike, each naming the key, the value and what the key takes;
// a bad sim:// URL hides no other endpoint's error.
func TestLoadConfig_ReportsEveryErrorWithKeyValueAndExpectation(t *testing.T) {
	body := `bogus = 1
[server]
listen = "127.0.0.1:0"
admin = "127.0.0.1:0"
max_body_bytes = "lots"
[chain]
kind = "bitcoin"
[hedge]
delay = "fast"
quantile = 2
[breaker]
cooldown = "ten"
failures = -1
backoff_base = 5
[methods.timeouts]
eth_getLogs = 5
eth_call = "-1s"
[[endpoints]]
name = "a"
url = "sim://nope"
proxy = "ftp://ops:pw1234567890@proxy.corp"
[[endpoints]]
name = "b"
url = "sim://fast?median=abc"
[[endpoints]]
name = "c"
url = "ftp://x.invalid"
[[endpoints]]
name = "d"
url = ["` + secretURL + `"]
`
	_, err := loadConfig(writeConfig(t, body))
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{
		"unknown top-level keys: bogus",
		`server.max_body_bytes: "lots" is not a whole number`,
		`breaker.cooldown: "ten" is not a duration (e.g. 10s`,
		// A bare number was nanoseconds.
		`breaker.backoff_base: 5 is not a duration (e.g. 10s`,
		`methods.timeouts.eth_getLogs: 5 is not a duration (e.g. 10s`,
		`methods.timeouts.eth_call: must be a positive duration, got -1s`,
		`hedge.delay: must be "auto" or a duration such as "120ms", got "fast"`,
		`hedge.quantile: must be in (0, 1), got 2`,
		`breaker.failures: must be at least 1, got -1`,
		`chain.kind: must be "evm" or "solana", got "bitcoin"`,
		`endpoints[0].url: sim: unknown preset "nope"`,
		`endpoints[0].proxy: scheme "ftp" is not http, https, socks5 or socks5h`,
		`endpoints[1].url: sim: url parameter median`,
		`endpoints[2].url: scheme "ftp" is not http or https`,
		`endpoints[3].url: a list is not a string`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	for _, raw := range []string{"cannot parse value", "strconv.", "'int64'", "[]interface"} {
		if strings.Contains(msg, raw) {
			t.Errorf("error shows the decoder's own text %q:\n%s", raw, msg)
		}
	}
	if strings.Contains(msg, "pw1234567890") {
		t.Errorf("a proxy's password is shown:\n%s", msg)
	}
	if strings.Contains(msg, "endpoints[3].url: required") || strings.Count(msg, "breaker.cooldown") != 1 {
		t.Errorf("a key that failed to decode is reported twice:\n%s", msg)
	}
	assertNoSecrets(t, "error", msg)
}

// Every error is reported, not only the first (README): a bad value in a
// [hedge.methods.<method>] table dropped the whole table, so its other
// values (and whether the method is ever hedged) went unjudged; demo.mix
// named its first bad item only; and a value of the wrong type in a table
// of methods was taken, converted.
func TestLoadConfig_EveryErrorOfAMethodTableAndOfTheDemoMix(t *testing.T) {
	body := `[hedge.methods.eth_call]
quantile = 1.5
enabled = "no"
[hedge.methods.eth_sendRawTransaction]
enabled = "no"
[hedge.methods.eth_getBalance]
quantile = "0.5"
[methods.weights]
eth_call = "2"
[demo]
enabled = true
mix = ["eth_call:x", "eth_getBalance:-1", "eth_sendRawTransaction"]
[[endpoints]]
name = "a"
url = "sim://fast"
`
	_, err := loadConfig(writeConfig(t, body))
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	want := []string{
		`hedge.methods.eth_call.enabled: "no" is not true or false`,
		`hedge.methods.eth_call.quantile: must be in (0, 1), got 1.5`,
		`hedge.methods.eth_sendRawTransaction.enabled: "no" is not true or false`,
		`hedge.methods.eth_sendRawTransaction: eth_sendRawTransaction is a write: never hedged`,
		`hedge.methods.eth_getBalance.quantile: "0.5" is text, not a number (write it without quotes)`,
		`methods.weights.eth_call: "2" is text, not a number (write it without quotes)`,
		`demo.mix: "eth_call:x": the weight after ':' must be a positive number`,
		`demo.mix: "eth_getBalance:-1": the weight after ':' must be a positive number`,
		`demo.mix: "eth_sendRawTransaction": the demo sends reads only`,
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if n := strings.Count(msg, "\n"); n != len(want) {
		t.Errorf("%d problems, want the %d above:\n%s", n, len(want), msg)
	}
}

// A bad value from the environment names the variable, not the file.
func TestLoadConfig_BadEnvironmentValueNamesTheVariable(t *testing.T) {
	t.Setenv("RPCDASH_BREAKER_FAILURES", "abc")
	t.Setenv("RPCDASH_HEDGE_QUANTILE", "1.5")
	_, err := loadConfig(writeConfig(t, loopbackServer+validEndpoint))
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`breaker.failures (from RPCDASH_BREAKER_FAILURES): "abc" is not a whole number`,
		`hedge.quantile (from RPCDASH_HEDGE_QUANTILE): must be in (0, 1), got 1.5`,
		"and the environment",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// An RPCDASH_ variable that names no config key is an error naming it (a
// typo would otherwise be ignored), with the likely key; the tooling's own
// variables (RPCDASH_GETH, RPCDASH_TOOLS, RPCDASH_FUZZTIME) are not keys and
// are let through.
func TestLoadConfig_UnknownEnvironmentVariableIsAnError(t *testing.T) {
	path := writeConfig(t, loopbackServer+validEndpoint)
	t.Setenv("RPCDASH_GETH", "/nonexistent/geth")
	t.Setenv("RPCDASH_TOOLS", "/nonexistent")
	t.Setenv("RPCDASH_FUZZTIME", "10x")
	if _, err := loadConfig(path); err != nil {
		t.Fatalf("tooling variables refused: %v", err)
	}
	t.Setenv("RPCDASH_HEDGE_DELAYY", "50ms")
	t.Setenv("RPCDASH_SERVER_BOGUS", "1")
	_, err := loadConfig(path)
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		"RPCDASH_HEDGE_DELAYY is not a config key (did you mean RPCDASH_HEDGE_DELAY?)",
		"RPCDASH_SERVER_BOGUS is not a config key",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// A variable in lower case was ignored without a word (environment names
// are case-sensitive): rpcdash_hedge_delay=1s left the delay at auto. It
// is an error naming the variable to write; one near no key is someone
// else's and let be. A map table's variable says the table is the file's.
func TestLoadConfig_AnEnvironmentVariableInLowerCaseIsNotIgnored(t *testing.T) {
	path := writeConfig(t, loopbackServer+validEndpoint)
	t.Setenv("rpcdash_data_dir", "/tmp")
	if _, err := loadConfig(path); err != nil {
		t.Fatalf("a lower-case variable near no key refused: %v", err)
	}
	t.Setenv("rpcdash_hedge_delay", "1s")
	t.Setenv("Rpcdash_Breaker_Failurs", "4")
	t.Setenv("RPCDASH_HEDGE_METHODS_ETH_CALL_DELAY", "1s")
	t.Setenv("RPCDASH_HEDGE_METHODS", "eth_call")
	_, err := loadConfig(path)
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		"rpcdash_hedge_delay is not read: the variables are named in capitals (RPCDASH_HEDGE_DELAY)",
		"Rpcdash_Breaker_Failurs is not a config key (did you mean RPCDASH_BREAKER_FAILURES?)",
		"RPCDASH_HEDGE_METHODS_ETH_CALL_DELAY is not a config key ([hedge.methods] are set in the config file only)",
		"RPCDASH_HEDGE_METHODS is not a config key ([hedge.methods] are set in the config file only)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "rpcdash_data_dir") {
		t.Errorf("a variable near no key named:\n%v", err)
	}
}

// A key the file misspells is an error naming it and, when one of its
// section's keys is a likely typo of it, that key: "[[endpoint]]" or
// "request_timout" would otherwise leave the operator to find the
// difference by eye, mid-incident.
func TestLoadConfig_UnknownKeyNamesTheKeyItIsATypoOf(t *testing.T) {
	_, err := loadConfig(writeConfig(t, loopbackServer+validEndpoint+`
[[endpoint]]
name = "b"
url = "http://127.0.0.1:2"
[hedge]
quantil = 0.9
zzz = 1
[hedge.methods.eth_call]
dealy = "10ms"
`+"\n[breaker]\nfailurs = 3\n"))
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{
		"unknown top-level keys: endpoint (did you mean endpoints?)",
		"hedge.quantil (did you mean hedge.quantile?)",
		"hedge.methods.eth_call.dealy (did you mean hedge.methods.eth_call.delay?)",
		"breaker.failurs (did you mean breaker.failures?)",
		", hedge.zzz",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "zzz (did you mean") {
		t.Errorf("suggested a key for one nothing is near:\n%s", msg)
	}
}

// A value of the wrong TOML type stops start-up even where the decoder
// could convert it ("4" for a whole number, "true" for a boolean, true
// for text), as README says; the environment's values, all text, are
// still converted.
func TestLoadConfig_AValueOfTheWrongTypeIsRefusedNotConverted(t *testing.T) {
	body := `[server]
listen = true
[breaker]
failures = "4"
[hedge]
enabled = "true"
[[endpoints]]
name = 5
url = "sim://steady"
`
	_, err := loadConfig(writeConfig(t, body))
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{
		`server.listen: true is a boolean, not a string (quote it)`,
		`breaker.failures: "4" is text, not a whole number (write it without quotes)`,
		`hedge.enabled: "true" is text, not true or false (write it without quotes)`,
		`endpoints[0].name: 5 is a number, not a string (quote it)`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "loopback") || strings.Count(msg, "\n") != 4 {
		t.Errorf("want the four type errors and nothing that follows from a converted value:\n%s", msg)
	}
	// A proxy URL may carry a password, so even a number given for one is
	// not shown, as for an endpoint's url (987654321 was echoed).
	_, err = loadConfig(writeConfig(t, "[[endpoints]]\nname = \"a\"\nurl = \"sim://steady\"\nproxy = 987654321\n"))
	if err == nil || !strings.Contains(err.Error(), "endpoints[0].proxy: the value given is a number, not a string") || strings.Contains(err.Error(), "987654321") {
		t.Errorf("proxy = 987654321: %v", err)
	}
	t.Setenv("RPCDASH_BREAKER_FAILURES", "4")
	cfg, err := loadConfig(writeConfig(t, "[[endpoints]]\nname = \"a\"\nurl = \"sim://steady\"\n"))
	if err != nil || cfg.Breaker.Failures != 4 {
		t.Fatalf("RPCDASH_BREAKER_FAILURES=4: failures %d, %v", cfg.Breaker.Failures, err)
	}
}

// The hint after a type error is one that, followed, loads: "quote it"
// said of enabled = 1 and failures = true, and quoted they were refused
// again as text (`"1" is text, not true or false (write it without quotes)`).
func TestLoadConfig_ATypeErrorsHintIsOneThatLoads(t *testing.T) {
	body := `[hedge]
enabled = 1
max_extra = true
[breaker]
failures = false
[server]
listen = 8545
`
	_, err := loadConfig(writeConfig(t, body))
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{
		"hedge.enabled: 1 is a number, not true or false\n",
		"hedge.max_extra: true is a boolean, not a whole number\n",
		"breaker.failures: false is a boolean, not a whole number\n",
		"server.listen: 8545 is a number, not a string (quote it)",
	} {
		if !strings.Contains(msg+"\n", want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

// A TOML syntax error names its line and column (it said only "toml:
// expected newline but got U+0073 's'"), and never quotes the line: an
// endpoint's URL may carry a key.
func TestLoadConfig_ASyntaxErrorNamesItsLineNotItsText(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"[server]\nlisten = \"127.0.0.1:8545\"\nrequest_timeout = 10s\n", "line 3, column 21: expected newline but got U+0073 's'"},
		{"[[endpoints]]\nname = \"a\"\nurl = \"https://node.example/v2/SECRETKEY\n", "line 3, column 41: basic strings cannot have new lines"},
	} {
		path := writeConfig(t, tc.body)
		_, err := loadConfig(path)
		if err == nil || !strings.Contains(err.Error(), "config "+path+": "+tc.want) {
			t.Errorf("%q: %v, want %q", tc.body, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "SECRETKEY") {
			t.Errorf("the error quotes the URL's key: %v", err)
		}
	}
}

// With --attach, --config is read only for [ui] (README): a file holding
// only [ui] is enough (it was refused for having no [[endpoints]]), the
// other sections and their variables are neither read nor judged, and an
// error in [ui], or in an RPCDASH_UI_ variable, still names its key.
func TestConsoleAttach_ConfigIsReadOnlyForUI(t *testing.T) {
	uiOnly := writeConfig(t, "[ui]\ntheme = \"light\"\nrefresh = \"250ms\"\n")
	t.Setenv("RPCDASH_HEDGE_DELAY", "soon") // another section's: not read
	u, err := attachUIConfig(consoleFlags{config: uiOnly, configSet: true})
	if err != nil || u.Theme != "light" || u.Refresh != 250*time.Millisecond {
		t.Errorf("[ui] only: %+v, %v", u, err)
	}
	for _, tc := range []struct {
		body, env string
		want      []string
	}{
		{"[ui]\nrefresh = \"1ms\"\n[hedge]\nquantile = 2\n", "", []string{"ui.refresh: must be between 50ms and 10s, got 1ms"}},
		{"bogus = 1\n[ui]\nthme = \"light\"\n", "", []string{"unknown keys: ui.thme (did you mean ui.theme?)"}},
		{"ui = 3\n", "", []string{"ui: 3 is not a table"}},
		{"[ui]\n", "abc", []string{"ui.refresh (from RPCDASH_UI_REFRESH): \"abc\" is not a duration"}},
	} {
		t.Run(tc.body, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("RPCDASH_UI_REFRESH", tc.env)
			}
			dir := t.TempDir()
			code, out, errb := runBounded(t, "console", "--attach", "127.0.0.1:1", "--config", writeConfig(t, tc.body),
				"--log-file", filepath.Join(dir, "console.log"))
			if code != 1 || strings.Contains(out, "invalid config") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1, the error on stderr", code, out, errb)
			}
			for _, w := range tc.want {
				if !strings.Contains(errb, w) {
					t.Errorf("stderr does not say %q:\n%s", w, errb)
				}
			}
			for _, other := range []string{"endpoints", "hedge.", "top-level", "RPCDASH_HEDGE_DELAY"} {
				if strings.Contains(errb, other) {
					t.Errorf("stderr judges %s, not of [ui]:\n%s", other, errb)
				}
			}
		})
	}
}

// Without --config an attached console applies and checks RPCDASH_UI_*
// all the same (RPCDASH_UI_REFRESH=2ms started it, RPCDASH_UI_THEME was
// not applied: an RPCDASH_ variable is never silently dropped), over the
// [ui] of ./config.toml when there is one, as the console in process
// reads ./config.toml, and over the shipped config's [ui] when there is
// none.
func TestConsoleAttach_WithoutConfigAppliesTheEnvironmentAndConfigToml(t *testing.T) {
	attach := func(t *testing.T) (stderr string) {
		t.Helper()
		code, out, errb := runBounded(t, "console", "--attach", "127.0.0.1:1", "--log-file", filepath.Join(t.TempDir(), "console.log"))
		if code != 1 || strings.Contains(out, "invalid config") {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 1, the error on stderr", code, out, errb)
		}
		return errb
	}
	uiOf := func(t *testing.T) engine.UIConfig {
		t.Helper()
		f, err := parseConsoleFlags([]string{"--attach", "127.0.0.1:1"}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		u, err := attachUIConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	t.Run("no ./config.toml", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("RPCDASH_UI_THEME", "contrast")
		if u := uiOf(t); u.Theme != "contrast" || u.Refresh != engine.Default().UI.Refresh {
			t.Errorf("RPCDASH_UI_THEME=contrast: %+v", u)
		}
		t.Setenv("RPCDASH_UI_REFRESH", "2ms")
		if errb := attach(t); !strings.Contains(errb, "ui.refresh (from RPCDASH_UI_REFRESH): must be between 50ms and 10s, got 2ms") {
			t.Errorf("stderr does not name the variable:\n%s", errb)
		}
	})
	t.Run("./config.toml", func(t *testing.T) {
		t.Chdir(t.TempDir())
		if err := os.WriteFile("config.toml", []byte("[ui]\ntheme = \"light\"\n[hedge]\nquantile = 2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("RPCDASH_HEDGE_DELAY", "soon") // another section's: not read
		if u := uiOf(t); u.Theme != "light" {
			t.Errorf("./config.toml's ui.theme not read: %+v", u)
		}
		t.Setenv("RPCDASH_UI_THEME", "contrast")
		if u := uiOf(t); u.Theme != "contrast" {
			t.Errorf("RPCDASH_UI_THEME=contrast over ./config.toml: %+v", u)
		}
		if err := os.WriteFile("config.toml", []byte("[ui]\nrefresh = \"1ms\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		errb := attach(t)
		if !strings.Contains(errb, "invalid config (config.toml):\n  ui.refresh: must be between 50ms and 10s, got 1ms") {
			t.Errorf("stderr does not name ./config.toml's ui.refresh:\n%s", errb)
		}
		if strings.Contains(errb, "hedge") {
			t.Errorf("stderr judges another section:\n%s", errb)
		}
	})
}

// An endpoint URL given as a bad value is never shown (README), not even
// redacted: the errors said `port 70000 is outside 1-65535 in
// http://127.0.0.1:70000/REDACTED`, and a URL the parser reads wrongly
// (no scheme) would show its key as its host. They say what is wrong.
func TestLoadConfig_ABadEndpointURLIsNeverShown(t *testing.T) {
	ep := func(url string) string { return "[[endpoints]]\nname = \"e\"\nurl = \"" + url + "\"\n" }
	for url, want := range map[string]string{
		"http://127.0.0.1:70000/SECRETKEY": "endpoints[0].url: port 70000 is outside 1-65535",
		"ftp://127.0.0.1:17001/SECRETKEY":  `endpoints[0].url: scheme "ftp" is not http or https`,
		"http:///SECRETKEY":                "endpoints[0].url: has no host",
		"mainnet.infura.io/v3/SECRETKEY":   "endpoints[0].url: has no scheme: write http:// or https:// before the host",
		"http://127.0.0.1:/SECRETKEY":      "endpoints[0].url: has an empty port",
		"http://[::1/SECRETKEY":            "endpoints[0].url: not a URL such as https://host:port/path",
	} {
		_, err := loadConfig(writeConfig(t, ep(url)+"proxy = \"socks4://u:SECRETPW@127.0.0.1:1\"\n"))
		if err == nil {
			t.Fatalf("%s: loaded", url)
		}
		msg := err.Error()
		for _, w := range []string{want, `endpoints[0].proxy: scheme "socks4" is not http, https, socks5 or socks5h`} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error lacks %q:\n%s", url, w, msg)
			}
		}
		for _, shown := range []string{"SECRET", "127.0.0.1", "infura", "REDACTED"} {
			if strings.Contains(msg, shown) {
				t.Errorf("%s: error shows the URL (%s):\n%s", url, shown, msg)
			}
		}
	}
}

// An endpoint URL put by mistake into a key that takes no URL is shown, as
// in every other message, as scheme, host and port: the validation
// messages quoted such a value whole, its key with it.
func TestLoadConfig_AURLInANonURLKeyIsNeverShown(t *testing.T) {
	const secret = "SECRETKEYZ"
	const u = "https://mainnet.infura.io/v3/" + secret
	body := `[server]
listen = "` + u + `"
admin = "` + u + `"
vhosts = ["` + u + `"]
cors_origins = ["` + u + `"]
[chain]
kind = "` + u + `"
pin = "` + u + `"
[hedge]
delay = "` + u + `"
[hedge.methods.eth_call]
delay = "` + u + `"
[probes]
asn = "` + u + `"
resolver = "` + u + `"
[demo]
enabled = true
mix = ["` + u + `"]
[[endpoints]]
name = "` + u + `"
url = "http://127.0.0.1:1"
role = "` + u + `"
[[endpoints]]
name = "` + u + `"
url = "http://127.0.0.1:2"
`
	_, err := loadConfig(writeConfig(t, body))
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, key := range []string{"server.listen", "server.admin", "server.vhosts[0]", "server.cors_origins[0]",
		"chain.kind", "chain.pin", "hedge.delay", "hedge.methods.eth_call.delay", "probes.asn", "probes.resolver", "demo.mix",
		"endpoints[0].name", "endpoints[0].role", "endpoints[1].name"} {
		if !strings.Contains(msg, "\n  "+key+": ") {
			t.Errorf("error does not name %s:\n%s", key, msg)
		}
	}
	if strings.Contains(msg, secret) {
		t.Errorf("error shows the URL's key:\n%s", msg)
	}
	if !strings.Contains(msg, `"https://REDACTED.infura.io/REDACTED"`) {
		t.Errorf("error does not show the value redacted:\n%s", msg)
	}
	// probes.asn_db is read only in asn mode db, which the URL in
	// probes.asn is not.
	_, err = loadConfig(writeConfig(t, loopbackServer+"[probes]\nasn_db = \""+u+"\"\n"+validEndpoint))
	if err == nil || !strings.Contains(err.Error(), "\n  probes.asn_db: ") || strings.Contains(err.Error(), secret) {
		t.Errorf("probes.asn_db: %v", err)
	}
	// A URL as a method's name, which a key shows as it is (lower-cased).
	const k = `"https://node:8545/v3/` + secret + `"`
	_, err = loadConfig(writeConfig(t, loopbackServer+validEndpoint+"[methods.weights]\n"+k+" = -1\n[methods.timeouts]\n"+k+" = 5\n[hedge.methods."+k+"]\ndelay = \"5ms\"\n"))
	if err == nil || strings.Count(err.Error(), "https://node:8545/REDACTED") < 3 || strings.Contains(strings.ToUpper(err.Error()), secret) {
		t.Errorf("a URL as a method's name: %v", err)
	}
}

// A bad value of a map's entry is named by the key the README gives
// (methods.timeouts.<method>), as out-of-range values already were: the
// decoder's own name was methods.timeouts[eth_call].
func TestLoadConfig_AMapEntryIsNamedByItsDottedKey(t *testing.T) {
	_, err := loadConfig(writeConfig(t, loopbackServer+validEndpoint+`
[methods.timeouts]
eth_call = 5
[methods.weights]
eth_call = "x"
[hedge.methods.eth_getbalance]
enabled = "yes"
`))
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{
		`methods.timeouts.eth_call: 5 is not a duration`,
		`methods.weights.eth_call: "x" is not a number`,
		`hedge.methods.eth_getbalance.enabled: "yes" is not true or false`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "[eth_") {
		t.Errorf("an entry is named in brackets:\n%s", msg)
	}
}

// A list key given a value that is not a list of strings stops start-up
// naming the key (or the item): the decoder made 5 into ["5"] and false
// into ["0"], so methods.no_hedge = 5 started as if it were fine and
// cors_origins = false was reported as the origin "0". One string is still
// a comma-separated list.
func TestLoadConfig_AListKeyOfTheWrongTypeIsRefused(t *testing.T) {
	for body, want := range map[string][]string{
		"[methods]\nno_hedge = 5\n":                         {`methods.no_hedge: 5 is a number, not a list of strings`},
		"[methods]\nreads = true\n":                         {`methods.reads: true is a boolean, not a list of strings`},
		"[methods]\nwrites = 7\n":                           {`methods.writes: 7 is a number, not a list of strings`},
		"[methods]\nno_hedge = [5, true]\n":                 {`methods.no_hedge[0]: 5 is a number, not a string (quote it)`, `methods.no_hedge[1]: true is a boolean, not a string (quote it)`},
		"[methods.no_hedge]\neth_call = 1\n":                {`methods.no_hedge: a table is not a list of strings`},
		"[demo]\nenabled = true\nmix = [\"eth_call\", 5]\n": {`demo.mix[1]: 5 is a number, not a string (quote it)`},
		"vhosts = 3\n":                                      {`server.vhosts: 3 is a number, not a list of strings`},
		"cors_origins = false\n":                            {`server.cors_origins: false is a boolean, not a list of strings`},
	} {
		_, err := loadConfig(writeConfig(t, loopbackServer+body+validEndpoint))
		if err == nil {
			t.Errorf("%q: loaded", body)
			continue
		}
		msg := err.Error()
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q: error lacks %q:\n%s", body, w, msg)
			}
		}
		// Nothing that follows from a converted value ("0" is not an origin,
		// demo.mix's "" has no method name), nor the decoder's own words.
		if n := strings.Count(msg, "\n"); n != len(want) {
			t.Errorf("%q: want %d lines:\n%s", body, len(want), msg)
		}
	}
	cfg, err := loadConfig(writeConfig(t, loopbackServer+"vhosts = \"a.example, b.example\"\n"+"[methods]\nno_hedge = [\"eth_call\"]\n"+validEndpoint))
	if err != nil || len(cfg.Server.VHosts) != 2 || len(cfg.Methods.NoHedge) != 1 {
		t.Fatalf("a comma-separated string and a list: vhosts %q, no_hedge %q, %v", cfg.Server.VHosts, cfg.Methods.NoHedge, err)
	}
}

// A value the environment set is named as such wherever a message shows
// it: as an item of a list (server.vhosts[0]) and as the other key a
// message is about (server.admin, for server.admin_token), where the
// variable went unnamed.
func TestLoadConfig_AnEnvironmentValueIsNamedWhereverItIsShown(t *testing.T) {
	t.Setenv("RPCDASH_SERVER_VHOSTS", "a b")
	t.Setenv("RPCDASH_SERVER_CORS_ORIGINS", "nope")
	t.Setenv("RPCDASH_SERVER_ADMIN", "0.0.0.0:19311")
	t.Setenv("RPCDASH_SERVER_LISTEN", "0.0.0.0:19310")
	t.Setenv("RPCDASH_HEDGE_MAX_DELAY", "1ms")
	_, err := loadConfig(writeConfig(t, validEndpoint))
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{
		"and the environment",
		`server.vhosts[0] (from RPCDASH_SERVER_VHOSTS): "a b" is not a host name`,
		`server.cors_origins[0] (from RPCDASH_SERVER_CORS_ORIGINS): "nope" is not an origin`,
		`server.admin_token: required: server.admin (from RPCDASH_SERVER_ADMIN) "0.0.0.0:19311" is not a loopback address`,
		`server.allow_remote: server.listen (from RPCDASH_SERVER_LISTEN) "0.0.0.0:19310" is not a loopback address`,
		`hedge.min_delay: 5ms is above hedge.max_delay (from RPCDASH_HEDGE_MAX_DELAY) 1ms`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "server.admin_token (from") || strings.Count(msg, "(from ") != 5 {
		t.Errorf("a key the environment did not set is named as its:\n%s", msg)
	}
}

// A list key's comma-separated value takes spaces after its commas, as
// people write lists: "http://a.example, http://b.example" refused its
// second origin, shown as "<unparseable url>".
func TestLoadConfig_AListFromTheEnvironmentTakesSpacesAfterCommas(t *testing.T) {
	t.Setenv("RPCDASH_SERVER_CORS_ORIGINS", "http://a.example, http://b.example")
	t.Setenv("RPCDASH_SERVER_VHOSTS", " a.example ,b.example")
	t.Setenv("RPCDASH_METHODS_READS", "foo_bar, baz_qux")
	cfg, err := loadConfig(writeConfig(t, loopbackServer+validEndpoint))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key       string
		got, want []string
	}{
		{"server.cors_origins", cfg.Server.CORSOrigins, []string{"http://a.example", "http://b.example"}},
		{"server.vhosts", cfg.Server.VHosts, []string{"a.example", "b.example"}},
		{"methods.reads", cfg.Methods.Reads, []string{"foo_bar", "baz_qux"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %q, want %q", c.key, c.got, c.want)
		}
	}
}

// An admin token of whitespace only, or with whitespace at an end, is
// refused naming server.admin_token and never shown: HTTP trims a header's
// ends, so no request could carry it and the admin API (left open to the
// network when server.admin is not loopback) would refuse every call.
func TestLoadConfig_AnAdminTokenNoRequestCouldCarryIsRefused(t *testing.T) {
	const offLoopback = "[server]\nlisten = \"127.0.0.1:0\"\nadmin = \"0.0.0.0:0\"\n"
	for _, tc := range []struct{ body, env, want string }{
		{offLoopback + "admin_token = \"   \"\n", "", "server.admin_token: is only whitespace"},
		{loopbackServer + "admin_token = \"\\t\"\n", "", "server.admin_token: is only whitespace"},
		{offLoopback + "admin_token = \"s3cret-tok \"\n", "", "server.admin_token: starts or ends with whitespace"},
		{offLoopback, "   ", "server.admin_token (from RPCDASH_SERVER_ADMIN_TOKEN): is only whitespace"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("RPCDASH_SERVER_ADMIN_TOKEN", tc.env)
			}
			_, err := loadConfig(writeConfig(t, tc.body+validEndpoint))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%q: %v, want %q", tc.body, err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the token is shown: %v", err)
			}
		})
	}
	if _, err := loadConfig(writeConfig(t, offLoopback+"admin_token = \"s3cret tok\"\n"+validEndpoint)); err != nil {
		t.Fatalf("a token with a space inside: %v", err)
	}
}

// probes.resolver, probes.asn_db and the ports of server.listen and
// server.admin are checked with every other key, before anything listens:
// they failed after "listening", one at a time and not in key: value form
// (probes: resolver …, probes: asn_db: open …), or at bind, or ("a b c" as
// a resolver) not at all.
func TestServe_ProbesAndAddressErrorsAreReportedBeforeAnythingListens(t *testing.T) {
	// A short path, which messages show whole (a value is cut past 80 bytes).
	f, err := os.CreateTemp("", "asn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	f.Close()
	notADB := f.Name()
	for _, tc := range []struct {
		body string
		want []string
	}{
		{`[server]
listen = "127.0.0.1:abc"
admin = "127.0.0.1:99999"
[hedge]
quantile = 2
[probes]
resolver = "::bad::"
asn_db = "/nonexistent/asn.mmdb"
` + validEndpoint, []string{
			`server.listen: the port of "127.0.0.1:abc" is not a number from 0 to 65535`,
			`server.admin: the port of "127.0.0.1:99999" is not a number from 0 to 65535`,
			`hedge.quantile: must be in (0, 1), got 2`,
			`probes.resolver: "::bad::" is not the host:port of a DNS server`,
			`probes.asn_db: cannot read "/nonexistent/asn.mmdb": no such file or directory`,
		}},
		{loopbackServer + "[probes]\nresolver = \"a b c\"\nasn = \"db\"\nasn_db = \"" + notADB + "\"\n" + validEndpoint, []string{
			`probes.resolver: "a b c" is not the host:port of a DNS server`,
			`probes.asn_db: "` + notADB + `" is not a MaxMind DB`,
		}},
		{loopbackServer + "[probes]\nresolver = \"127.0.0.1:0\"\n" + validEndpoint, []string{
			`probes.resolver: "127.0.0.1:0" is not the host:port of a DNS server`,
		}},
	} {
		code, stdout, stderr := serveConfig(t, tc.body)
		if code != 1 || stdout != "" || strings.Contains(stderr, "listening") {
			t.Errorf("exit code %d, stdout %q; stderr:\n%s", code, stdout, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, "\n  "+w) {
				t.Errorf("stderr lacks %q:\n%s", w, stderr)
			}
		}
		if n := strings.Count(stderr, "\n  "); n != len(tc.want) {
			t.Errorf("want %d errors, got %d:\n%s", len(tc.want), n, stderr)
		}
	}
	// The README's host:port, and a bare host (port 53), load; the
	// database is not read while the probes are off.
	for _, body := range []string{
		"[probes]\nresolver = \"127.0.0.1:5353\"\n", "[probes]\nresolver = \"[::1]:53\"\n", "[probes]\nresolver = \"dns.example\"\n",
		"[probes]\nenabled = false\nasn_db = \"/nonexistent/asn.mmdb\"\n",
	} {
		if _, err := loadConfig(writeConfig(t, loopbackServer+body+validEndpoint)); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// An endpoint URL given as the console's theme by mistake is shown in the
// warning as endpoint URLs are, without its key.
func TestPickTheme_AURLAsThemeIsShownWithoutItsKey(t *testing.T) {
	var stderr, logs strings.Builder
	const secret = "SECRETKEYT"
	_, _ = pickTheme("", "https://mainnet.infura.io/v3/"+secret, slog.New(slog.NewTextHandler(&logs, nil)), &stderr)
	out := stderr.String() + logs.String()
	if strings.Contains(out, secret) || !strings.Contains(stderr.String(), "https://REDACTED.infura.io/REDACTED") || !strings.Contains(stderr.String(), "using the dark theme") {
		t.Fatalf("warning:\n%s", out)
	}
}

// server.vhosts = [] was taken silently for the default list, where the
// README says a list replaces it: an empty one is refused, naming the key.
func TestLoadConfig_AnEmptyVHostsListIsRefused(t *testing.T) {
	_, err := loadConfig(writeConfig(t, "[server]\nvhosts = []\n[[endpoints]]\nname = \"a\"\nurl = \"http://127.0.0.1:1\"\n"))
	if err == nil || !strings.Contains(err.Error(), "server.vhosts: is an empty list") {
		t.Fatalf("vhosts = []: %v, want it refused naming server.vhosts", err)
	}
}
