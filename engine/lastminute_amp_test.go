package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
)

// The console's amp is the last minute's upstream attempts per client
// request. Counted when they were sent, a request's attempts fell into
// an older part of the minute than the request itself, counted when it
// ended: as the minute moved on, one could age out without the other,
// and the header read "amp 0.79×" at 0.4 req/s, fewer attempts than
// requests, with every request sent. A request's attempts are counted with
// it: amp is the mean X-Rpcdash-Attempts of the minute's requests.
func TestStatus_TheMinutesAmplificationCountsARequestsAttemptsWithIt(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	gate := make(chan struct{})
	var arrived atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &req) != nil {
			http.Error(w, "not one call", http.StatusBadRequest)
			return
		}
		if req.Method == "eth_getBalance" {
			arrived.Add(1)
			<-gate
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, req.ID)
	}))
	defer srv.Close()
	h := newClockedHarness(t, clock, func(c *engine.Config) {
		c.Hedge.Enabled = false
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "gated", URL: srv.URL})
	})
	const n = 8
	replies := make([]reply, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = h.call(i, "eth_getBalance", addr, "latest")
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); arrived.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			close(gate)
			wg.Wait()
			t.Fatalf("%d of %d reads reached the endpoint", arrived.Load(), n)
		}
	}
	// Every attempt is sent; the minute moves past the moment they were,
	// and then the requests end.
	clock.Advance(time.Minute + 10*time.Second)
	close(gate)
	wg.Wait()
	for _, r := range replies {
		mustOK(t, r)
	}
	c := h.status().Client
	if c.Requests != n || c.Upstream != n || c.Amplification != 1 {
		t.Fatalf("the minute: %d requests, %d attempts upstream, amp %.2f; want %d, %d, 1 (each request sent once)",
			c.Requests, c.Upstream, c.Amplification, n, n)
	}
}
