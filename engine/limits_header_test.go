package engine_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

// A request's header is bounded at 64 KiB (net/http's 1 MiB default let a
// header of empty lines cost about 16 MB each to parse): a bearer token's
// header is served, one of 120,000 empty lines is answered 431, on the RPC
// port and the admin port alike.
func TestLimits_AHeaderPast64KiBIsRefused(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	send := func(url string, body string, lines int, value string) int {
		t.Helper()
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+value)
		for i := range lines {
			req.Header.Add("X-Pad", string(rune('a'+i%26)))
		}
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`
	if got := send(h.rpc, call, 0, strings.Repeat("t", 8<<10)); got != http.StatusOK {
		t.Errorf("an 8 KiB token: %d; want 200", got)
	}
	if got := send(h.rpc, call, 12_000, "t"); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("12,000 header lines (about 120 KB) on the RPC port: %d; want 431", got)
	}
	if got := send(h.admin+"/v1/status", "", 12_000, "t"); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("12,000 header lines on the admin port: %d; want 431", got)
	}
}
