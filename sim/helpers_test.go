package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTimeout bounds every wait in a test; reaching it is a failure.
const testTimeout = 20 * time.Second

func start(t *testing.T, cfg Config) *Upstream {
	t.Helper()
	u := New(cfg)
	if err := u.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		if err := u.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return u
}

func newClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: testTimeout}
}

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// post sends body and returns status, headers and body.
func post(t *testing.T, c *http.Client, url, body string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := c.Post(url, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return resp.StatusCode, resp.Header, b
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *Error          `json:"error"`
}

func requestBody(method string, params ...any) string {
	if params == nil {
		params = []any{}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return string(b)
}

// call makes one JSON-RPC call that must answer HTTP 200.
func call(t *testing.T, c *http.Client, u *Upstream, method string, params ...any) response {
	t.Helper()
	status, _, body := post(t, c, u.URL(), requestBody(method, params...))
	if status != http.StatusOK {
		t.Fatalf("%s: status %d, body %s", method, status, body)
	}
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: decode %s: %v", method, body, err)
	}
	return r
}

// result calls method, requires success and decodes the result into v.
func result(t *testing.T, c *http.Client, u *Upstream, v any, method string, params ...any) {
	t.Helper()
	r := call(t, c, u, method, params...)
	if r.Error != nil {
		t.Fatalf("%s: error %+v", method, r.Error)
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("%s: decode result %s: %v", method, r.Result, err)
	}
}

// newManualClock is a clock a test moves by hand.
func newManualClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
}
