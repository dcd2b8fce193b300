package engine_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A read whose client gave up before its answer (curl --max-time 0.015)
// got no error of rpcdash's: it is counted gone, not as an error, in the
// minute's client figures, the totals and the method's. Counted as errors,
// five such reads read `err 5 100%` in red on an idle, healthy pool.
func TestClient_ARequestItsClientGaveUpOnIsGoneNotAnError(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: sim.Latency{Median: 400 * time.Millisecond}})
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.rpc, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`))
		req.Header.Set("Content-Type", "application/json")
		if resp, err := h.client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			t.Fatalf("read %d answered (HTTP %d) within its client's 30 ms, the sim takes 400 ms", i, resp.StatusCode)
		}
		cancel()
	}
	var st engine.Snapshot
	deadline := time.Now().Add(5 * time.Second)
	for st = h.status(); st.Totals.Requests < 3 && time.Now().Before(deadline); st = h.status() {
		time.Sleep(20 * time.Millisecond) // the requests end once rpcdash sees their clients gone
	}
	m := st.Methods["eth_getBalance"]
	if st.Totals.Requests != 3 || st.Totals.ClientGone != 3 || st.Totals.ClientErrors != 0 {
		t.Errorf("totals: %d requests, %d gone, %d client errors; want 3, 3, 0", st.Totals.Requests, st.Totals.ClientGone, st.Totals.ClientErrors)
	}
	if st.Client.Requests != 3 || st.Client.Gone != 3 || st.Client.Errors != 0 {
		t.Errorf("the minute: %d requests, %d gone, %d errors; want 3, 3, 0", st.Client.Requests, st.Client.Gone, st.Client.Errors)
	}
	if m.Client.Gone != 3 || m.Client.Errors != 0 || m.ClientErrors != 0 || m.ClientGone != 3 {
		t.Errorf("eth_getBalance: minute %d gone %d errors, since start %d gone %d errors; want 3 gone, 0 errors", m.Client.Gone, m.Client.Errors, m.ClientGone, m.ClientErrors)
	}
	code, body := h.adminDo("GET", "/v1/requests?method=eth_getBalance", "")
	if code != 200 || strings.Count(string(body), `"client_gone"`) != 3 {
		t.Errorf("traces: want 3 with outcome client_gone: HTTP %d %s", code, body)
	}
	code, body = h.adminDo("GET", "/metrics", "")
	if code != 200 || !strings.Contains(string(body), `rpcdash_request_duration_seconds_count{class="read",method="eth_getBalance",outcome="gone"} 3`) {
		t.Errorf("metrics: no gone outcome for the 3 reads:\n%s", grepLines(string(body), "rpcdash_request_duration_seconds_count"))
	}
}
