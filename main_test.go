package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testutil.RemoveBinaries()
		os.Exit(code)
	}))
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveConfig runs `rpcdash serve --config FILE` in-process. Every case here
// is a config error, which returns before anything listens or dials; a run
// that is still going after the bound is a start-up that should have failed.
func serveConfig(t *testing.T, body string) (code int, stdout, stderr string) {
	t.Helper()
	path := writeConfig(t, body)
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"serve", "--config", path}, &out, &errb) }()
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("serve started with an invalid config")
	}
	return code, out.String(), errb.String()
}

const validEndpoint = `
[[endpoints]]
name = "a"
url = "sim://fast"
`

const loopbackServer = `
[server]
listen = "127.0.0.1:0"
admin = "127.0.0.1:0"
`

func TestServe_ConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name string
		toml string
		want []string
	}{
		{"unknown top-level key", "bogus = 1\n" + loopbackServer + validEndpoint, []string{"unknown top-level keys: bogus"}},
		{"unknown section", loopbackServer + validEndpoint + "[bogus]\nx = 1\n", []string{"bogus"}},
		{"unknown nested key", loopbackServer + validEndpoint + "[hedge]\nbogus = 1\n", []string{"hedge", "bogus"}},
		{"unknown endpoint key", loopbackServer + validEndpoint + "weight = 3\n", []string{"endpoints[0]", "weight"}},
		{"bad duration", "[server]\nlisten = \"127.0.0.1:0\"\nrequest_timeout = \"abc\"\n" + validEndpoint, []string{"server.request_timeout"}},
		{"zero duration", "[server]\nlisten = \"127.0.0.1:0\"\nrequest_timeout = \"0s\"\n" + validEndpoint, []string{"server.request_timeout"}},
		{"negative duration", loopbackServer + validEndpoint + "[breaker]\ncooldown = \"-1s\"\n", []string{"breaker.cooldown"}},
		{"wrong type", loopbackServer + validEndpoint + "[breaker]\nfailures = \"three\"\n", []string{"breaker.failures"}},
		{"quantile above 1", loopbackServer + validEndpoint + "[hedge]\nquantile = 2\n", []string{"hedge.quantile"}},
		{"bad hedge delay", loopbackServer + validEndpoint + "[hedge]\ndelay = \"soon\"\n", []string{"hedge.delay"}},
		{"zero breaker failures", loopbackServer + validEndpoint + "[breaker]\nfailures = 0\n", []string{"breaker.failures"}},
		{"negative breaker failures", loopbackServer + validEndpoint + "[breaker]\nfailures = -1\n", []string{"breaker.failures"}},
		{"max_open_share zero", loopbackServer + validEndpoint + "[breaker]\nmax_open_share = 0\n", []string{"breaker.max_open_share"}},
		{"panic_threshold above 1", loopbackServer + validEndpoint + "[router]\npanic_threshold = 1.5\n", []string{"router.panic_threshold"}},
		{"promote_match_rate below 0", loopbackServer + validEndpoint + "[router]\npromote_match_rate = -0.1\n", []string{"router.promote_match_rate"}},
		{"negative write_affinity", loopbackServer + validEndpoint + "[router]\nwrite_affinity = \"-1s\"\n", []string{"router.write_affinity", "-1s", "0s turns write affinity off"}},
		{"write_affinity not a duration", loopbackServer + validEndpoint + "[router]\nwrite_affinity = \"half a minute\"\n", []string{"router.write_affinity", "half a minute"}},
		{"unknown chain", loopbackServer + "[chain]\nkind = \"btc\"\n" + validEndpoint, []string{"chain.kind", "btc"}},
		{"listen not host:port", "[server]\nlisten = \"8545\"\nadmin = \"127.0.0.1:0\"\n" + validEndpoint, []string{"server.listen"}},
		{"no endpoints", loopbackServer, []string{"endpoints"}},
		{"duplicate endpoint names", loopbackServer + validEndpoint + validEndpoint, []string{"endpoints[1].name", "duplicate"}},
		{"endpoint without name", loopbackServer + "[[endpoints]]\nurl = \"sim://fast\"\n", []string{"endpoints[0].name"}},
		{"url without scheme", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"rpc.example.invalid/v1\"\n", []string{"endpoints[0].url"}},
		{"ftp url", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"ftp://rpc.example.invalid/\"\n", []string{"endpoints[0].url", "http"}},
		{"empty url", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"\"\n", []string{"endpoints[0].url"}},
		{"missing url", loopbackServer + "[[endpoints]]\nname = \"a\"\n", []string{"endpoints[0].url"}},
		{"http url without host", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"http:///v1\"\n", []string{"endpoints[0].url"}},
		{"second url bad", loopbackServer + validEndpoint + "[[endpoints]]\nname = \"b\"\nurl = \"ftp://x.invalid\"\n", []string{"endpoints[1].url"}},
		{"unknown sim preset", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"sim://nope\"\n", []string{"endpoints[0].url", "nope"}},
		{"unknown sim parameter", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"sim://fast?wobble=1\"\n", []string{"endpoints[0].url", "wobble"}},
		{"bad sim latency", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"sim://fast?median=abc\"\n", []string{"endpoints[0].url", "median"}},
		{"admin off loopback without token", "[server]\nlisten = \"127.0.0.1:0\"\nadmin = \"0.0.0.0:0\"\n" + validEndpoint, []string{"server.admin_token"}},
		{"toml syntax error", loopbackServer + validEndpoint + "[hedge\n", []string{"config"}},
		{"url port out of range", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"http://127.0.0.1:99999999/\"\n", []string{"endpoints[0].url", "port 99999999", "1-65535"}},
		{"url port zero", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"http://127.0.0.1:0/\"\n", []string{"endpoints[0].url", "port 0"}},
		{"bad endpoint role", loopbackServer + validEndpoint + "role = \"backup\"\n", []string{"endpoints[0].role", "backup"}},
		{"rpc off loopback without allow_remote", "[server]\nlisten = \"0.0.0.0:0\"\nadmin = \"127.0.0.1:0\"\n" + validEndpoint, []string{"server.allow_remote", "0.0.0.0:0"}},
		{"rpc on all interfaces without allow_remote", "[server]\nlisten = \":0\"\nadmin = \"127.0.0.1:0\"\n" + validEndpoint, []string{"server.allow_remote"}},
		{"bad cors origin", loopbackServer + "cors_origins = [\"evil.example/path\"]\n" + validEndpoint, []string{"server.cors_origins[0]"}},
		{"bad vhost", loopbackServer + "vhosts = [\"a b\"]\n" + validEndpoint, []string{"server.vhosts[0]"}},
		{"negative max_conns", loopbackServer + "max_conns = -1\n" + validEndpoint, []string{"server.max_conns"}},
		{"negative max_inflight", loopbackServer + "max_inflight = -1\n" + validEndpoint, []string{"server.max_inflight"}},
		{"tiny max_response_bytes", loopbackServer + "max_response_bytes = 10\n" + validEndpoint, []string{"server.max_response_bytes"}},
		{"negative read_timeout", loopbackServer + "read_timeout = \"-1s\"\n" + validEndpoint, []string{"server.read_timeout"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := serveConfig(t, tc.toml)
			if code != 1 {
				t.Fatalf("exit code %d, want 1; stderr:\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, stderr)
				}
			}
			if stdout != "" {
				t.Errorf("serve printed on stdout before failing:\n%s", stdout)
			}
		})
	}
}

func TestServe_MissingConfigFileNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.toml")
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--config", path}, &out, &errb); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	if !strings.Contains(errb.String(), path) {
		t.Errorf("stderr does not name %s:\n%s", path, errb.String())
	}
}

// The secret parts of secretURL: user info, a key in the path, a key in the
// query. The host is .invalid, which never resolves, and every case fails
// validation before anything dials or listens.
const secretURL = "https://user:pw@example.invalid/v3/0123456789abcdef0123456789abcdef?apikey=SECRETKEY123"

var secretParts = []string{"user:pw", ":pw@", "0123456789abcdef0123456789abcdef", "SECRETKEY123"}

func assertNoSecrets(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range secretParts {
		if strings.Contains(text, s) {
			t.Errorf("%s shows the secret %q:\n%s", where, s, text)
		}
	}
}

func TestServe_ConfigErrorsNeverShowURLSecrets(t *testing.T) {
	ep := func(name, url string) string {
		return fmt.Sprintf("[[endpoints]]\nname = %q\nurl = %q\n", name, url)
	}
	secret := ep("a", secretURL)
	cases := []struct {
		name string
		toml string
		want string
	}{
		{"unknown key beside it", loopbackServer + secret + "weight = 3\n", "weight"},
		{"bad duration elsewhere", "[server]\nrequest_timeout = \"abc\"\n" + secret, "server.request_timeout"},
		{"bad value elsewhere", loopbackServer + secret + "[hedge]\nquantile = 2\n", "hedge.quantile"},
		{"unknown chain", loopbackServer + "[chain]\nkind = \"btc\"\n" + secret, "chain.kind"},
		{"duplicate name", loopbackServer + secret + secret, "endpoints[1].name"},
		{"wrong scheme", loopbackServer + ep("a", strings.Replace(secretURL, "https", "ftp", 1)), "endpoints[0].url"},
		{"unparseable", loopbackServer + ep("a", strings.Replace(secretURL, "example", "exa mple", 1)), "endpoints[0].url"},
		{"url of the wrong type", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = [\"" + secretURL + "\"]\n", "endpoints[0].url"},
		{"secret as a duration", "[server]\nrequest_timeout = \"" + secretURL + "\"\n" + secret, "server.request_timeout"},
		{"unterminated string", loopbackServer + "[[endpoints]]\nname = \"a\"\nurl = \"" + secretURL + "\n", "config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := serveConfig(t, tc.toml)
			if code != 1 {
				t.Fatalf("exit code %d, want 1; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr does not name %q:\n%s", tc.want, stderr)
			}
			assertNoSecrets(t, "stderr", stderr)
			assertNoSecrets(t, "stdout", stdout)
		})
	}
}

func TestLoadConfig_EnvironmentOverrides(t *testing.T) {
	path := writeConfig(t, `
[server]
listen = "127.0.0.1:7001"

[hedge]
delay = "50ms"
`+validEndpoint)
	t.Setenv("RPCDASH_SERVER_LISTEN", "127.0.0.1:7002")  // overrides the file
	t.Setenv("RPCDASH_HEDGE_DELAY", "120ms")             // overrides the file
	t.Setenv("RPCDASH_BREAKER_FAILURES", "7")            // section absent from the file
	t.Setenv("RPCDASH_SERVER_REQUEST_TIMEOUT", "3s")     // key absent from the file
	t.Setenv("RPCDASH_METHODS_WRITES", "foo_send,foo_x") // list from a string

	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Server.Listen; got != "127.0.0.1:7002" {
		t.Errorf("server.listen = %q, want the environment's 127.0.0.1:7002", got)
	}
	if got := cfg.Hedge.Delay; got != "120ms" {
		t.Errorf("hedge.delay = %q, want the environment's 120ms", got)
	}
	if got := cfg.Breaker.Failures; got != 7 {
		t.Errorf("breaker.failures = %d, want the environment's 7", got)
	}
	if got := cfg.Server.RequestTimeout; got != 3*time.Second {
		t.Errorf("server.request_timeout = %s, want the environment's 3s", got)
	}
	if got := strings.Join(cfg.Methods.Writes, ","); got != "foo_send,foo_x" {
		t.Errorf("methods.writes = %q, want foo_send,foo_x", got)
	}
	if got := cfg.Server.Admin; got != "127.0.0.1:8546" {
		t.Errorf("server.admin = %q, want the default 127.0.0.1:8546", got)
	}
}

func TestLoadConfig_BadEnvironmentValueNamesTheKey(t *testing.T) {
	cases := []struct{ env, value, key string }{
		{"RPCDASH_BREAKER_FAILURES", "abc", "breaker.failures"},
		{"RPCDASH_BREAKER_FAILURES", "0", "breaker.failures"},
		{"RPCDASH_SERVER_REQUEST_TIMEOUT", "soon", "server.request_timeout"},
		{"RPCDASH_HEDGE_QUANTILE", "1.5", "hedge.quantile"},
		{"RPCDASH_CHAIN_KIND", "btc", "chain.kind"},
	}
	path := writeConfig(t, loopbackServer+validEndpoint)
	for _, tc := range cases {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			_, err := loadConfig(path)
			if err == nil {
				t.Fatalf("%s=%s loaded without error", tc.env, tc.value)
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Errorf("error does not name %s: %v", tc.key, err)
			}
		})
	}
}

func TestLoadConfig_ShippedConfig(t *testing.T) {
	cfg, err := loadConfig("config.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Endpoints) != 3 {
		t.Fatalf("config.toml has %d endpoints, want 3", len(cfg.Endpoints))
	}
	presets := map[string]bool{}
	for _, ep := range cfg.Endpoints {
		u, err := url.Parse(ep.URL)
		if err != nil || u.Scheme != "sim" {
			t.Fatalf("endpoint %s: url %q is not sim://", ep.Name, ep.URL)
		}
		presets[u.Host] = true
	}
	if len(presets) != 3 {
		t.Errorf("config.toml endpoints use presets %v, want three different ones", presets)
	}

	// The engine accepts it once the sims run, as `serve` does.
	sims, err := startSims(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.CloseAll(sims)
	if len(sims) != 3 {
		t.Fatalf("started %d sims, want 3", len(sims))
	}
	if _, err := engine.New(cfg, engine.Options{}); err != nil {
		t.Fatalf("engine rejects the shipped config: %v", err)
	}
}

// startProc runs the rpcdash binary with args, its output captured.
func startProc(t *testing.T, args ...string) *testutil.Proc {
	t.Helper()
	return testutil.Start(t, exec.Command(testutil.Binary(t, false), args...))
}

var addrLine = regexp.MustCompile(`^rpcdash: JSON-RPC on http://(\S+)\s+admin on http://(\S+)$`)

// client never keeps connections, so no transport goroutine outlives a test.
var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}

type rpcAnswer struct {
	header http.Header
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func call(t *testing.T, addr, method string) rpcAnswer {
	t.Helper()
	a, err := tryCall(addr, method)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func tryCall(addr, method string) (rpcAnswer, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":[]}`, method)
	resp, err := client.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
	if err != nil {
		return rpcAnswer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return rpcAnswer{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return rpcAnswer{}, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, raw)
	}
	var a rpcAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return rpcAnswer{}, fmt.Errorf("%s: %v: %s", method, err, raw)
	}
	if a.Error != nil || len(a.Result) == 0 {
		return rpcAnswer{}, fmt.Errorf("%s: no result: %s", method, raw)
	}
	a.header = resp.Header
	return a, nil
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %v: %s", url, resp.StatusCode, err, raw)
	}
	return string(raw)
}

// closingListener accepts connections on loopback and drops them at once,
// so every attempt sent to it fails with an error quoting the URL.
func closingListener(t *testing.T) string {
	t.Helper()
	return testutil.ServeTCP(t, func(net.Conn) {}) // the connection is closed as the handler returns
}

func TestServe_RoutesReportsAndRedacts(t *testing.T) {
	keyed := strings.Replace(secretURL, "https://", "http://", 1)
	keyed = strings.Replace(keyed, "example.invalid", closingListener(t), 1)
	cfg := writeConfig(t, loopbackServer+`
[[endpoints]]
name = "local"
url = "sim://fast"

[[endpoints]]
name = "keyed"
url = "`+keyed+`"
`)
	p := startProc(t, "serve", "--config", cfg, "--log-level", "debug")
	m := p.Line(t, addrLine)
	rpcAddr, adminAddr := m[1], m[2]

	for i := 0; i < 10; i++ {
		a := call(t, rpcAddr, "eth_blockNumber")
		if got := a.header.Get(engine.HeaderEndpoint); got != "local" {
			t.Errorf("%s = %q, want local (keyed drops every connection)", engine.HeaderEndpoint, got)
		}
		if n, err := strconv.Atoi(a.header.Get(engine.HeaderAttempts)); err != nil || n < 1 {
			t.Errorf("%s = %q, want a positive count", engine.HeaderAttempts, a.header.Get(engine.HeaderAttempts))
		}
		if h := a.header.Get(engine.HeaderHedged); h != "0" && h != "1" {
			t.Errorf("%s = %q, want 0 or 1", engine.HeaderHedged, h)
		}
		if id := a.header.Get(engine.HeaderRequestID); id == "" {
			t.Errorf("no %s header", engine.HeaderRequestID)
		}
	}

	status := get(t, "http://"+adminAddr+"/v1/status")
	var snap engine.Snapshot
	if err := json.Unmarshal([]byte(status), &snap); err != nil {
		t.Fatal(err)
	}
	byName := map[string]engine.EndpointSnapshot{}
	for _, ep := range snap.Endpoints {
		byName[ep.Name] = ep
	}
	if len(byName) != 2 || !strings.HasPrefix(byName["local"].URL, "http://127.0.0.1:") {
		t.Fatalf("status endpoints = %+v, want local (on loopback) and keyed", snap.Endpoints)
	}
	k := byName["keyed"]
	ku, _ := url.Parse(keyed)
	if want := "http://REDACTED@" + ku.Host + "/REDACTED?REDACTED"; k.URL != want {
		t.Errorf("keyed url in status = %q, want %q: redacted but recognisable by its host", k.URL, want)
	}
	if k.Rates.Failures == 0 || k.LastError == "" {
		t.Errorf("keyed shows no failure (failures %d, last error %q): the redaction of errors went untested",
			k.Rates.Failures, k.LastError)
	}
	assertNoSecrets(t, "/v1/status", status)
	assertNoSecrets(t, "/v1/events", get(t, "http://"+adminAddr+"/v1/events"))
	assertNoSecrets(t, "/metrics", get(t, "http://"+adminAddr+"/metrics"))
	assertNoSecrets(t, "/v1/requests", get(t, "http://"+adminAddr+"/v1/requests"))
	var out, errOut bytes.Buffer
	if err := cmdStatus(context.Background(), []string{"--admin", adminAddr, "--requests"}, &out, &errOut); err != nil {
		t.Fatalf("status --requests: %v %s", err, errOut.String())
	}
	if o := out.String(); !strings.Contains(o, "slowest of the last") || !strings.Contains(o, "eth_blockNumber") || !strings.Contains(o, "local primary@") {
		t.Errorf("status --requests printed no slow requests:\n%s", out.String())
	}
	assertNoSecrets(t, "status --requests", out.String())

	p.Signal(t, syscall.SIGTERM)
	if code := p.Wait(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, p.Stderr())
	}
	assertNoSecrets(t, "stdout", p.Stdout())
	logs := p.Stderr()
	if !strings.Contains(logs, "keyed") {
		t.Errorf("the logs never mention the failing endpoint, so their redaction went untested:\n%s", logs)
	}
	assertNoSecrets(t, "stderr (logs)", logs)
}

func TestServe_SIGTERMLetsInFlightRequestsFinish(t *testing.T) {
	const latency = time.Second
	cfg := writeConfig(t, `
[server]
listen = "127.0.0.1:0"
admin = "127.0.0.1:0"
shutdown_timeout = "5s"

[[endpoints]]
name = "slow"
url = "sim://steady?median=`+latency.String()+`&sigma=0"
`)
	p := startProc(t, "serve", "--config", cfg)
	m := p.Line(t, addrLine)
	rpcAddr, adminAddr := m[1], m[2]

	type outcome struct {
		a   rpcAnswer
		err error
		at  time.Time
	}
	res := make(chan outcome, 1)
	go func() {
		a, err := tryCall(rpcAddr, "eth_blockNumber")
		res <- outcome{a, err, time.Now()}
	}()
	waitInFlight(t, adminAddr)
	signalled := time.Now()
	p.Signal(t, syscall.SIGTERM)

	testutil.WaitUntil(t, 5*time.Second, "the RPC port to refuse new connections after SIGTERM", func() bool {
		c, err := net.DialTimeout("tcp", rpcAddr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})

	o := <-res
	if o.err != nil {
		p.Wait(t, 10*time.Second)
		t.Fatalf("in-flight request failed across shutdown: %v (rpcdash exit code %d)", o.err, p.ExitCode())
	}
	if !o.at.After(signalled) {
		t.Fatalf("request finished before the signal; it was not in flight")
	}
	if got := o.a.header.Get(engine.HeaderEndpoint); got != "slow" {
		t.Errorf("answered by %q, want slow", got)
	}
	if code := p.Wait(t, 5*time.Second+2*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, p.Stderr())
	}
	if _, err := net.DialTimeout("tcp", rpcAddr, time.Second); err == nil {
		t.Errorf("RPC port still accepts connections after exit")
	}
}

// waitInFlight polls /v1/status until the engine is serving a request.
func waitInFlight(t *testing.T, adminAddr string) {
	t.Helper()
	testutil.WaitUntil(t, 5*time.Second, "the request to show as in flight", func() bool {
		var snap engine.Snapshot
		if err := json.Unmarshal([]byte(get(t, "http://"+adminAddr+"/v1/status")), &snap); err != nil {
			t.Fatal(err)
		}
		return snap.InFlight > 0
	})
}

func TestSim_ServesPresetsUntilSIGINT(t *testing.T) {
	p := startProc(t, "sim", "fast", "steady")
	simLine := func() (string, string) {
		m := p.Line(t, regexp.MustCompile(`^(\S+)\t(http://127\.0\.0\.1:\d+)\t`))
		return m[1], m[2]
	}
	seen := map[string]string{}
	for range 2 {
		name, u := simLine()
		seen[name] = u
	}
	if len(seen) != 2 || seen["fast"] == "" || seen["steady"] == "" || seen["fast"] == seen["steady"] {
		t.Fatalf("sim printed %v, want distinct URLs for fast and steady", seen)
	}
	for name, u := range seen {
		a := call(t, strings.TrimPrefix(u, "http://"), "eth_blockNumber")
		var head string
		if err := json.Unmarshal(a.Result, &head); err != nil || !strings.HasPrefix(head, "0x") {
			t.Errorf("%s: eth_blockNumber result %s, want a hex quantity", name, a.Result)
		}
	}
	p.Signal(t, syscall.SIGINT)
	if code := p.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGINT, want 0; stderr:\n%s", code, p.Stderr())
	}
}

func TestRun_UnknownCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"frobnicate"}, &out, &errb); code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if !strings.Contains(errb.String(), "frobnicate") || !strings.Contains(errb.String(), "usage") {
		t.Errorf("stderr does not name the command and show usage:\n%s", errb.String())
	}
}

// rpcdash --help, -h and help print the command list on stdout and exit 0:
// every command with its synopsis, not the console's flags.
func TestRun_HelpListsTheCommands(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"-help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("exit code %d, want 0; stderr:\n%s", code, errb.String())
			}
			for _, want := range []string{"usage:", "rpcdash [console]", "console --attach", "rpcdash serve", "rpcdash sim",
				"rpcdash bench", "rpcdash drill", "rpcdash status", "--help"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the command list lacks %q:\n%s", want, out.String())
				}
			}
			if strings.Contains(out.String()+errb.String(), "-log-file string") {
				t.Errorf("printed the console's flags instead of the command list:\n%s%s", out.String(), errb.String())
			}
		})
	}
}

// Each command's --help (and help COMMAND) prints its flags and exits 0
// without running anything.
func TestRun_CommandHelpListsItsFlags(t *testing.T) {
	cases := []struct {
		args  []string
		flags []string
	}{
		{[]string{"bench", "--help"}, []string{"-rate", "-policies", "-duration", "-median", "-format"}},
		{[]string{"help", "bench"}, []string{"-rate", "-policies"}},
		{[]string{"serve", "--help"}, []string{"usage:", "rpcdash serve", "-config", "-log-level"}},
		{[]string{"console", "-h"}, []string{"usage:", "console --attach URL [--token T] [--readonly] [--theme NAME|FILE] [--config FILE]", "-attach URL", "-readonly", "-log-file"}},
		{[]string{"sim", "--help"}, []string{"rpcdash sim", "-chain", "-median"}},
		{[]string{"drill", "--help"}, []string{"rpcdash drill", "-mode", "-breaker-failures"}},
		{[]string{"status", "--help"}, []string{"rpcdash status", "-admin URL", "-json"}},
		{[]string{"help", "console"}, []string{"-attach URL"}},
		{[]string{"help", "status"}, []string{"-admin URL"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code != 0 {
				t.Fatalf("exit code %d, want 0; stderr:\n%s", code, errb.String())
			}
			help := out.String()
			if errb.Len() > 0 {
				t.Errorf("--help wrote on stderr (it is the output asked for, on stdout):\n%s", errb.String())
			}
			if strings.Contains(help, "-attach rpcdash serve") {
				t.Errorf("the flag package took a backquoted phrase for -attach's argument name:\n%s", help)
			}
			for _, f := range tc.flags {
				if !strings.Contains(help, f) {
					t.Errorf("help lacks %q:\n%s", f, help)
				}
			}
			if strings.Contains(help, "row(s)") {
				t.Errorf("--help ran the command:\n%s", help)
			}
		})
	}
}

// A command line that cannot run exits 2 with the error on stderr and
// nothing on stdout, whichever command: an unknown flag, a bad flag value,
// a stray argument, a malformed URL of a running instance.
func TestRun_UsageErrorsExit2OnStderr(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"help", "serve", "extra"},
		{"help", "nope"},
		{"serve", "--bogus"},
		{"serve", "stray"},
		{"console", "--bogus"},
		{"console", "--token", "t"},
		{"console", "--attach", "ftp://127.0.0.1:1"},
		{"sim", "--bogus"},
		{"bench", "--bogus"},
		{"bench", "--rate", "fast"},
		{"bench", "--format", "xml"},
		{"bench", "stray"},
		{"drill", "--bogus"},
		{"drill", "--mode", "nope"},
		{"drill", "--admin", "ftp://127.0.0.1:1", "--no-load"},
		{"status", "--bogus"},
		{"status", "stray"},
		{"status", "--admin", "ftp://127.0.0.1:1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(args, &out, &errb); code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, errb.String())
			}
			if errb.Len() == 0 || out.Len() > 0 {
				t.Errorf("stdout %q, stderr %q: want the error on stderr only", out.String(), errb.String())
			}
		})
	}
}

// Every kind of bench row runs through main's engine starter.
func TestBench_EveryPolicyKindRuns(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"bench", "--policies", "direct,off,120ms,immediate", "--delays", "", "--quantiles", "0.95",
		"--duration", "300ms", "--warmup", "100ms", "--rate", "50", "--median", "5ms"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, errb.String())
	}
	for _, want := range []string{"direct", "off", "fixed 120ms", "immediate", "auto p95"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// Naming an ASN database without naming probes.asn asks for the database;
// naming both keeps the explicit mode.
func TestLoadConfig_ASNDatabaseImpliesDBMode(t *testing.T) {
	for body, want := range map[string]string{
		// With the probes off the (absent) database is not read.
		"[probes]\nenabled = false\nasn_db = \"/tmp/asn.mmdb\"\n": "db",
		"[probes]\nasn_db = \"/tmp/asn.mmdb\"\nasn = \"cymru\"\n": "cymru",
		"": "cymru",
	} {
		cfg, err := loadConfig(writeConfig(t, body+validEndpoint))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Probes.ASNMode(); got != want {
			t.Errorf("config %q: ASN mode %q, want %q", body, got, want)
		}
	}
}

// The drill takes every fault the engine can inject, and its synopsis in
// the command list says which (it once stopped at latency, before refused
// and unreachable were added).
func TestRun_HelpListsEveryDrillMode(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"help"}, &out, &errb); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, errb.String())
	}
	_, drill, _ := strings.Cut(out.String(), "rpcdash drill")
	drill, _, _ = strings.Cut(drill, "rpcdash status")
	for _, m := range engine.FaultModes {
		if !strings.Contains(drill, string(m)) {
			t.Errorf("the drill's synopsis lacks mode %q:\n%s", m, drill)
		}
	}
}

// serve with no --config and no ./config.toml says what it reads and how
// to name a file: it said only "config config.toml: open config.toml: no
// such file or directory", while the console runs the shipped config.
func TestServe_NoConfigFileHereSaysToNameOne(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	if code := run([]string{"serve"}, &out, &errb); code != 1 {
		t.Fatalf("exit code %d, want 1; stderr %s", code, errb.String())
	}
	if msg := errb.String(); !strings.Contains(msg, "config.toml") || !strings.Contains(msg, "unless --config names a file") {
		t.Errorf("stderr does not say to name a config file:\n%s", msg)
	}
}
