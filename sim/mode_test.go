package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMode_ErrorAnswers500Immediately(t *testing.T) {
	u := start(t, Config{Latency: Latency{Median: time.Hour}})
	u.SetMode(ModeError)
	c := newClient(t)
	status, _, body := post(t, c, u.URL(), `{"jsonrpc":"2.0","id":"x-1","method":"eth_blockNumber"}`)
	if status != http.StatusInternalServerError {
		t.Fatalf("status %d", status)
	}
	var r response
	if err := json.Unmarshal(body, &r); err != nil || r.Error == nil || string(r.ID) != `"x-1"` {
		t.Fatalf("body %s (%v)", body, err)
	}
	if got := u.Counters(); got.ByStatus[500] != 1 || got.Total != 1 {
		t.Fatalf("counters %+v", got)
	}

	u.SetMode(ModeNormal)
	u.SetLatency(Latency{})
	call(t, c, u, "eth_blockNumber")
}

func TestMode_RateLimitSendsRetryAfter(t *testing.T) {
	u := start(t, Config{RetryAfter: 1500 * time.Millisecond})
	u.SetMode(ModeRateLimit)
	c := newClient(t)
	status, h, _ := post(t, c, u.URL(), requestBody("eth_chainId"))
	if status != http.StatusTooManyRequests || h.Get("Retry-After") != "2" {
		t.Fatalf("status %d, Retry-After %q; want 429 and 2", status, h.Get("Retry-After"))
	}
	u.SetRetryAfter(0)
	status, h, _ = post(t, c, u.URL(), requestBody("eth_chainId"))
	if status != http.StatusTooManyRequests || h.Values("Retry-After") != nil {
		t.Fatalf("status %d, Retry-After %q; want 429 and none", status, h.Values("Retry-After"))
	}
}

func TestMode_ErrorForBatchAnswersEveryCall(t *testing.T) {
	u := start(t, Config{})
	u.SetMode(ModeError)
	status, _, body := post(t, newClient(t), u.URL(), `[{"id":1,"method":"a"},{"id":2,"method":"b"}]`)
	var rs []response
	if status != 500 || json.Unmarshal(body, &rs) != nil || len(rs) != 2 || rs[1].Error == nil || string(rs[1].ID) != "2" {
		t.Fatalf("status %d body %s", status, body)
	}
}

func TestRates_SharesFollowTheSeed(t *testing.T) {
	u := start(t, Config{Seed: 5, ErrorRate: 0.3, RateLimitRate: 0.2})
	c := newClient(t)
	const n = 200
	for range n {
		post(t, c, u.URL(), requestBody("eth_chainId"))
	}
	got := u.Counters().ByStatus
	if got[500]+got[429]+got[200] != n || got[500] < 40 || got[500] > 80 || got[429] < 20 || got[429] > 60 {
		t.Fatalf("statuses %v for shares 0.3/0.2 over %d", got, n)
	}

	u.SetErrorRate(0)
	u.SetRateLimitRate(1)
	if status, _, _ := post(t, c, u.URL(), requestBody("eth_chainId")); status != 429 {
		t.Fatalf("rate-limit share 1: status %d", status)
	}
	u.SetRateLimitRate(0)
	u.SetErrorRate(1)
	if status, _, _ := post(t, c, u.URL(), requestBody("eth_chainId")); status != 500 {
		t.Fatalf("error share 1: status %d", status)
	}
}

func TestMode_ForeignIDAnswersWithAnotherRequestsID(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	if err := u.Apply(ControlRequest{Mode: ptr("foreign_id")}); err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"eth_chainId"}`,
		`{"jsonrpc":"2.0","id":8,"method":"eth_chainId"}`,
	} {
		status, _, b := post(t, c, u.URL(), body)
		var r response
		if status != 200 || json.Unmarshal(b, &r) != nil || r.Result == nil {
			t.Fatalf("status %d body %s", status, b)
		}
		ids = append(ids, string(r.ID))
	}
	// The first has no predecessor: a made-up id; the second gets the first's.
	if ids[0] == "7" || ids[1] != "7" {
		t.Fatalf("answer ids %v to requests 7 and 8", ids)
	}
	status, _, b := post(t, c, u.URL(), `[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_chainId"}]`)
	var rs []response
	if status != 200 || json.Unmarshal(b, &rs) != nil || len(rs) != 2 || string(rs[0].ID) != "2" || string(rs[1].ID) != "1" {
		t.Fatalf("batch: status %d body %s", status, b)
	}
}

func TestMode_RPCErrorAnswersEveryCallWith200AndAServerError(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	if err := u.Apply(ControlRequest{Mode: ptr("rpc_error")}); err != nil {
		t.Fatal(err)
	}
	status, _, b := post(t, c, u.URL(), `{"jsonrpc":"2.0","id":3,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}`)
	var r response
	if status != 200 || json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Code != -32603 || r.Error.Message != "missing trie node" || string(r.ID) != "3" {
		t.Fatalf("status %d body %s", status, b)
	}
	code, msg := -32000, "header not found"
	if err := u.Apply(ControlRequest{ErrorCode: &code, ErrorMessage: &msg}); err != nil {
		t.Fatal(err)
	}
	status, _, b = post(t, c, u.URL(), `[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_chainId"}]`)
	var rs []response
	if status != 200 || json.Unmarshal(b, &rs) != nil || len(rs) != 2 || rs[1].Error == nil || rs[1].Error.Code != -32000 || rs[1].Error.Message != "header not found" {
		t.Fatalf("batch: status %d body %s", status, b)
	}
}

// rpc_error_methods confines the error to those methods, element by
// element: a node that does not serve eth_getLogs answers the rest.
func TestMode_RPCErrorConfinedToMethods(t *testing.T) {
	u := start(t, Config{})
	c := newClient(t)
	code, msg := -32601, "the method eth_getLogs does not exist/is not available"
	if err := u.Apply(ControlRequest{Mode: ptr("rpc_error"), ErrorCode: &code, ErrorMessage: &msg, RPCErrorMethods: &[]string{"eth_getLogs"}}); err != nil {
		t.Fatal(err)
	}
	status, _, b := post(t, c, u.URL(), `[{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{}]},{"jsonrpc":"2.0","id":2,"method":"eth_chainId"}]`)
	var rs []response
	if status != 200 || json.Unmarshal(b, &rs) != nil || len(rs) != 2 || rs[0].Error == nil || rs[0].Error.Code != -32601 || rs[1].Error != nil {
		t.Fatalf("batch: status %d body %s; want -32601 for eth_getLogs only", status, b)
	}
	if err := u.Apply(ControlRequest{RPCErrorMethods: &[]string{""}}); err == nil {
		t.Fatal("an empty method name was accepted")
	}
	if err := u.Apply(ControlRequest{RPCErrorMethods: &[]string{}}); err != nil {
		t.Fatal(err)
	}
	status, _, b = post(t, c, u.URL(), `{"jsonrpc":"2.0","id":3,"method":"eth_chainId"}`)
	var r response
	if status != 200 || json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("[] lifts the confinement: status %d body %s", status, b)
	}
}

func TestMode_HangReadsTheBodyFirst(t *testing.T) {
	u := start(t, Config{})
	u.SetMode(ModeHang)
	ctx, cancel := context.WithCancel(waitCtx(t))
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, "POST", u.URL(), strings.NewReader(requestBody("mev_sendBundle")))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	// Counted by method: the body was read before the hang.
	if err := u.WaitMethod(waitCtx(t), "mev_sendBundle", 1); err != nil {
		t.Fatal(err)
	}
	if err := u.WaitFor(waitCtx(t), func(c Counters) bool { return c.Hanging == 1 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if err := u.WaitCancelled(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// A per-method limit answers 429 only to requests carrying a listed
// method (a batch with one of them included); the rest are served.
func TestMode_RateLimitMethodsLimitsOnlyThoseMethods(t *testing.T) {
	u := start(t, Config{RateLimitMethods: []string{"eth_getLogs"}, RetryAfter: time.Second})
	u.SetMode(ModeRateLimit)
	c := newClient(t)
	if status, h, _ := post(t, c, u.URL(), requestBody("eth_getLogs", map[string]any{})); status != http.StatusTooManyRequests || h.Get("Retry-After") != "1" {
		t.Fatalf("eth_getLogs: status %d, Retry-After %q; want 429 and 1", status, h.Get("Retry-After"))
	}
	call(t, c, u, "eth_blockNumber")
	if status, _, _ := post(t, c, u.URL(), `[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":2,"method":"eth_getLogs","params":[{}]}]`); status != http.StatusTooManyRequests {
		t.Fatalf("batch holding eth_getLogs: status %d, want 429", status)
	}
	// The rate too is confined to the listed methods.
	u.SetMode(ModeNormal)
	u.SetRateLimitRate(1)
	call(t, c, u, "eth_chainId")
	if status, _, _ := post(t, c, u.URL(), requestBody("eth_getLogs", map[string]any{})); status != http.StatusTooManyRequests {
		t.Fatalf("eth_getLogs at rate 1: status %d, want 429", status)
	}
	// Through the control API, [] lifts the confinement.
	if err := u.Apply(ControlRequest{RateLimitMethods: &[]string{}}); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := post(t, c, u.URL(), requestBody("eth_chainId")); status != http.StatusTooManyRequests {
		t.Fatalf("eth_chainId with the limit on every method: status %d, want 429", status)
	}
	if err := u.Apply(ControlRequest{RateLimitMethods: &[]string{""}}); err == nil {
		t.Fatal("an empty method name accepted")
	}
	if got := u.Counters().ByStatus[http.StatusTooManyRequests]; got != 4 {
		t.Fatalf("%d answers were 429, want 4", got)
	}
}

func TestParseURL_RateLimitMethods(t *testing.T) {
	c, err := ParseURL("sim://steady?rate_limit_methods=eth_getLogs,trace_block&retry_after=86400s")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.RateLimitMethods, []string{"eth_getLogs", "trace_block"}) || c.RetryAfter != 24*time.Hour {
		t.Fatalf("config %+v", c)
	}
	if _, err := ParseURL("sim://steady?rate_limit_methods=eth_getLogs,,x"); err == nil {
		t.Fatal("an empty method name accepted")
	}
}
