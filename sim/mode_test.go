package sim

import (
	"encoding/json"
	"net/http"
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
