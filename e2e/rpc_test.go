package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// plainHTTP does not keep connections alive, so no connection goroutine
// outlives a call.
var plainHTTP = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true},
	Timeout:   30 * time.Second,
}

// reply is one raw HTTP answer.
type reply struct {
	Body   []byte
	Header http.Header
}

// post sends body as a JSON-RPC request and returns the raw answer.
func post(ctx context.Context, url, body string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := plainHTTP.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return reply{}, fmt.Errorf("POST %s: %s: %s", url, resp.Status, b)
	}
	return reply{Body: b, Header: resp.Header}, nil
}

func rawCall(ctx context.Context, url, body string) ([]byte, error) {
	r, err := post(ctx, url, body)
	return r.Body, err
}

func mustPost(t *testing.T, url, body string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := post(ctx, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// recorder keeps the rpcdash headers of every answer the go-ethereum
// client receives, so tests can say who answered a real client's call.
type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []http.Header
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.seen = append(r.seen, resp.Header.Clone())
		r.mu.Unlock()
	}
	return resp, err
}

// take returns the headers recorded since the previous take.
func (r *recorder) take() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seen
	r.seen = nil
	return s
}

// last returns the headers of the most recent answer.
func (r *recorder) last(t *testing.T) http.Header {
	t.Helper()
	s := r.take()
	if len(s) == 0 {
		t.Fatal("the client received no answer")
	}
	return s[len(s)-1]
}

// client is go-ethereum's client pointed at one URL.
type client struct {
	rpc *rpc.Client
	eth *ethclient.Client
	rec *recorder
}

func dial(t *testing.T, url string) *client {
	t.Helper()
	tr := &http.Transport{}
	rec := &recorder{base: tr}
	rc, err := rpc.DialOptions(context.Background(), url, rpc.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rc.Close()
		tr.CloseIdleConnections()
	})
	return &client{rpc: rc, eth: ethclient.NewClient(rc), rec: rec}
}

// stack is geth and rpcdash (geth + simA) with go-ethereum clients for
// both rpcdash and geth itself.
type stack struct {
	geth    *gethNode
	rpcdash *rpcdashNode
	via     *client // through rpcdash
	direct  *client // straight to geth
}

func newStack(t *testing.T) *stack {
	t.Helper()
	requireTools(t)
	g := startGeth(t)
	r := startRpcdash(t, g)
	return &stack{geth: g, rpcdash: r, via: dial(t, r.URL()), direct: dial(t, g.URL())}
}

// answeredBy fails the test unless every header set names endpoint.
func answeredBy(t *testing.T, endpoint string, hs ...http.Header) {
	t.Helper()
	for i, h := range hs {
		if got := h.Get("X-Rpcdash-Endpoint"); got != endpoint {
			t.Errorf("answer %d came from endpoint %q, want %q (headers %v)", i, got, endpoint, h)
		}
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
