package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

// The calls of an upstream batch are counted per method at once (runs of
// one method, not one count per call): a batch of runs of two methods, an
// invalid element and a notification is counted call for call in the
// console's last minute, the methods' accounts, the endpoint's rates and
// the metrics; and its answer announces its length, so a client has it
// whole at its last byte.
func TestBatch_UpstreamBatchIsCountedCallForCall(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	var els []string
	balances, codes := 0, 0
	for run, n := range []int{100, 50, 100, 50} {
		method := "eth_getBalance"
		if run%2 == 1 {
			method = "eth_getCode"
			codes += n
		} else {
			balances += n
		}
		for range n {
			els = append(els, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":["0x%040x","latest"]}`, len(els), method, len(els)+1))
		}
	}
	els = append(els, `{"jsonrpc":"2.0","id":"no method"}`, `{"jsonrpc":"2.0","method":"eth_chainId","params":[]}`)
	before := h.status().Endpoints[0].Rates // the harness's own calls at start
	resp, err := h.client.Post(h.rpc, "application/json", strings.NewReader("["+strings.Join(els, ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d, %v", resp.StatusCode, err)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) || len(resp.TransferEncoding) > 0 {
		t.Errorf("Content-Length %q, transfer encoding %v, for a body of %d bytes", cl, resp.TransferEncoding, len(body))
	}
	var answers []struct {
		ID     json.RawMessage
		Result *string
		Error  *struct{ Code int }
	}
	if err := json.Unmarshal(body, &answers); err != nil || len(answers) != balances+codes+1 {
		t.Fatalf("%d answers (%v), want %d: the notification has none", len(answers), err, balances+codes+1)
	}
	for i, a := range answers[:balances+codes] {
		if string(a.ID) != strconv.Itoa(i) || a.Result == nil {
			t.Fatalf("answer %d: id %s, result %v, error %+v", i, a.ID, a.Result, a.Error)
		}
	}
	if last := answers[len(answers)-1]; last.Error == nil || last.Error.Code != -32600 {
		t.Errorf("the element without a method: %+v, want -32600", last)
	}

	st := h.status()
	for method, n := range map[string]int64{"eth_getBalance": int64(balances), "eth_getCode": int64(codes)} {
		m := st.Methods[method]
		if m.Requests != n || m.Client.Requests != n || m.Client.Errors != 0 {
			t.Errorf("%s: %d requests, %d in the last minute (%d errors), want %d", method, m.Requests, m.Client.Requests, m.Client.Errors, n)
		}
		if r := st.Endpoints[0].Methods[method].Rates; r.Attempts != n || r.Successes != n {
			t.Errorf("%s on the endpoint: %d attempts, %d successes, want %d", method, r.Attempts, r.Successes, n)
		}
	}
	// The notification went upstream on its own.
	if r := st.Endpoints[0].Rates; r.Attempts-before.Attempts != int64(balances+codes+1) || r.Successes-before.Successes != int64(balances+codes+1) {
		t.Errorf("the endpoint: %d attempts, %d successes, want %d", r.Attempts-before.Attempts, r.Successes-before.Successes, balances+codes+1)
	}
	metrics := h.scrape()
	for method, n := range map[string]int{"eth_getBalance": balances, "eth_getCode": codes} {
		re := regexp.MustCompile(`(?m)^rpcdash_request_duration_seconds_count\{class="read",method="` + method + `",outcome="ok"\} (\d+)$`)
		if m := re.FindStringSubmatch(metrics); m == nil || m[1] != strconv.Itoa(n) {
			t.Errorf("%s: request duration count %v, want %d", method, m, n)
		}
	}
}

// scrape is the admin API's /metrics text.
func (h *harness) scrape() string {
	h.t.Helper()
	resp, err := h.client.Get(h.admin + "/metrics")
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		h.t.Fatalf("metrics: HTTP %d, %v", resp.StatusCode, err)
	}
	return string(b)
}
