package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// statusServe starts `rpcdash serve` over sims with extra config, and
// returns its RPC and admin addresses.
func statusServe(t *testing.T, extra string) (rpcAddr, adminAddr string) {
	t.Helper()
	cfg := writeConfig(t, loopbackServer+`
[probes]
interval = "200ms"
asn = "off"
`+extra+`
[[endpoints]]
name = "alpha"
url = "sim://steady?median=5ms&sigma=0.1&seed=1"
provider = "pa"
region = "eu-west"

[[endpoints]]
name = "beta"
url = "sim://steady?median=10ms&sigma=0.1&seed=2"
role = "standby"
`)
	p := startProc(t, "serve", "--config", cfg)
	m := p.Line(t, addrLine)
	t.Cleanup(func() {
		p.Signal(t, syscall.SIGTERM)
		if code := p.Wait(t, 10*time.Second); code != 0 {
			t.Errorf("serve exit %d", code)
		}
	})
	return m[1], m[2]
}

func runStatus(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"status"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// Each method's weight in the hedge budget shows in `rpcdash status` and
// its JSON: the built-in ones, and the config's where it sets one.
func TestStatus_ShowsEachMethodsWeight(t *testing.T) {
	rpcAddr, adminAddr := statusServe(t, `
[methods.weights]
eth_call = 9
`)
	for _, m := range []string{"eth_blockNumber", "eth_getLogs", "eth_call"} {
		tryCall(rpcAddr, m) // answered or not, the method is accounted
	}
	out, errs, code := runStatus(t, "--admin", adminAddr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for m, w := range map[string]string{"eth_blockNumber": "1", "eth_getLogs": "6", "eth_call": "9"} {
		if !regexp.MustCompile(`(?m)^  ` + m + ` +requests \d+ +weight ` + w + ` `).MatchString(out) {
			t.Errorf("no %s line with weight %s in:\n%s", m, w, out)
		}
	}
	js, _, _ := runStatus(t, "--admin", adminAddr, "--json")
	var doc struct {
		Methods map[string]struct {
			Weight float64 `json:"weight"`
		} `json:"methods"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Methods["eth_getLogs"].Weight != 6 || doc.Methods["eth_call"].Weight != 9 || doc.Methods["eth_blockNumber"].Weight != 1 {
		t.Fatalf("weights in the JSON: %+v", doc.Methods)
	}
}
