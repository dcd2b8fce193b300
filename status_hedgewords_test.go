package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// A method's line in `rpcdash status` says how it is hedged: a write ended
// in a bare "delay " and a method whose hedging was turned off still read
// "delay 250ms cold", as if it hedged.
func TestStatus_MethodLinesSayWhenAMethodIsNotHedged(t *testing.T) {
	rpcAddr, adminAddr := statusServe(t, "")
	for _, m := range []string{"eth_getBalance", "eth_call", "eth_sendRawTransaction", "eth_newBlockFilter"} {
		tryCall(rpcAddr, m)
	}
	req, err := http.NewRequest(http.MethodPut, "http://"+adminAddr+"/v1/hedge", strings.NewReader(`{"enabled":false,"method":"eth_call"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /v1/hedge: %s", resp.Status)
	}
	out, errs, code := runStatus(t, "--admin", adminAddr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for m, want := range map[string]string{
		"eth_getBalance":         `delay \S+ (cold|auto)$`,
		"eth_call":               `hedging off for this method$`,
		"eth_sendRawTransaction": `never hedged \(write\)$`,
		"eth_newBlockFilter":     `never hedged \(stateful\)$`,
	} {
		if !regexp.MustCompile(`(?m)^  ` + m + ` +requests .*` + want).MatchString(out) {
			t.Errorf("no %s line ending %q in:\n%s", m, want, out)
		}
	}
	req, _ = http.NewRequest(http.MethodPut, "http://"+adminAddr+"/v1/hedge", strings.NewReader(`{"enabled":false}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err = client.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	out, _, _ = runStatus(t, "--admin", adminAddr)
	if !regexp.MustCompile(`(?m)^  eth_getBalance +requests .* hedging off$`).MatchString(out) {
		t.Errorf("with hedging off for the pool, eth_getBalance's line does not end \"hedging off\":\n%s", out)
	}
}
