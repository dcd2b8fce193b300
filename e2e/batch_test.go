package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// TestBatch_MixedKnownAndUnknownMethodsKeepOrder sends a batch in which
// geth knows every method but getHealth: each element gets geth's own
// answer, in order, and the unknown one geth's own -32601 error.
func TestBatch_MixedKnownAndUnknownMethodsKeepOrder(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.rpcdash.drain("simA")

	batch := fmt.Sprintf(`[`+
		`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},`+
		`{"jsonrpc":"2.0","id":"health","method":"getHealth"},`+
		`{"jsonrpc":"2.0","id":3,"method":"eth_getBalance","params":["%s","latest"]},`+
		`{"jsonrpc":"2.0","id":4,"method":"eth_blockNumber"},`+
		`{"jsonrpc":"2.0","id":5,"method":"getHealth","params":[]}`+
		`]`, devAddr)
	want := mustPost(t, s.geth.URL(), batch)
	got := mustPost(t, s.rpcdash.URL(), batch)
	answeredBy(t, "geth", got.Header)

	var wantEls, gotEls []json.RawMessage
	if err := json.Unmarshal(want.Body, &wantEls); err != nil {
		t.Fatalf("geth's batch answer %s: %v", want.Body, err)
	}
	if err := json.Unmarshal(got.Body, &gotEls); err != nil {
		t.Fatalf("rpcdash's batch answer %s: %v", got.Body, err)
	}
	if len(gotEls) != len(wantEls) {
		t.Fatalf("rpcdash answered %d elements, geth %d:\n%s\n%s", len(gotEls), len(wantEls), got.Body, want.Body)
	}
	for i := range wantEls {
		if !bytes.Equal(gotEls[i], wantEls[i]) {
			t.Errorf("element %d through rpcdash: %s\ngeth directly: %s", i, gotEls[i], wantEls[i])
		}
	}
	var health struct {
		ID    string `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(wantEls[1], &health); err != nil || health.ID != "health" || health.Error.Code != -32601 {
		t.Errorf("geth answered getHealth with %s, want its -32601 error", wantEls[1])
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Logf("same elements, different framing:\nrpcdash %s\ngeth    %s", got.Body, want.Body)
	}

	// go-ethereum's batch client gets a result or geth's error per element.
	var chainID hexutil.Big
	var healthRes, balance, head any
	elems := []rpc.BatchElem{
		{Method: "eth_chainId", Result: &chainID},
		{Method: "getHealth", Result: &healthRes},
		{Method: "eth_getBalance", Args: []any{devAddr, "latest"}, Result: &balance},
		{Method: "eth_blockNumber", Result: &head},
	}
	if err := s.via.rpc.BatchCallContext(ctxT(t), elems); err != nil {
		t.Fatal(err)
	}
	answeredBy(t, "geth", s.via.rec.last(t))
	for i, el := range elems {
		var rpcErr rpc.Error
		switch {
		case i == 1:
			if !errors.As(el.Error, &rpcErr) || rpcErr.ErrorCode() != -32601 || el.Error.Error() != health.Error.Message {
				t.Errorf("getHealth in a batch: %v, want geth's -32601 %q", el.Error, health.Error.Message)
			}
		case el.Error != nil:
			t.Errorf("%s in a batch: %v", el.Method, el.Error)
		}
	}
	if (*big.Int)(&chainID).Int64() != 1337 {
		t.Errorf("eth_chainId in a batch = %s, want 1337", &chainID)
	}
}

// TestBatch_GethsBatchLimitIsMetInHundreds runs geth with a batch limit of
// 100 (--rpc.batch-request-limit), behind a proxy that notes the size of
// every batch it is sent. A batch of 250 balances sent to geth directly is
// refused ("batch too large"); through rpcdash each element gets geth's
// own answer, in order: the first time from the refused upstream batch
// sent again in batches of at most 100, the next time in those at once.
func TestBatch_GethsBatchLimitIsMetInHundreds(t *testing.T) {
	t.Parallel()
	requireTools(t)
	g := startGeth(t, "--rpc.batch-request-limit", "100")
	seen := batchSizes(t, g)
	r := startRpcdash(t, g)
	r.drain("simA")
	const n = 250
	var batch, one bytes.Buffer
	batch.WriteByte('[')
	for i := range n {
		if i > 0 {
			batch.WriteByte(',')
		}
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"eth_getBalance","params":["%s","latest"]}`, i, devAddr)
	}
	batch.WriteByte(']')
	direct := mustPost(t, g.URL(), batch.String())
	if !bytes.Contains(direct.Body, []byte("batch too large")) {
		t.Fatalf("geth with a limit of 100 answered a batch of %d: %.200s; want its refusal", n, direct.Body)
	}
	fmt.Fprintf(&one, `{"jsonrpc":"2.0","id":0,"method":"eth_getBalance","params":["%s","latest"]}`, devAddr)
	var want struct{ Result string }
	if err := json.Unmarshal(mustPost(t, g.URL(), one.String()).Body, &want); err != nil || want.Result == "" {
		t.Fatalf("the dev account's balance from geth: %v", err)
	}
	seen()
	for round, wantSizes := range [][]int{{n, 100, 100, 50}, {100, 100, 50}} {
		got := mustPost(t, r.URL(), batch.String())
		answeredBy(t, "geth", got.Header)
		var els []struct {
			ID     int             `json:"id"`
			Result string          `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(got.Body, &els); err != nil || len(els) != n {
			t.Fatalf("round %d: %d answers (%v): %.300s", round, len(els), err, got.Body)
		}
		for i, el := range els {
			if el.ID != i || el.Result != want.Result || el.Error != nil {
				t.Fatalf("round %d, answer %d: id %d result %q error %s; want id %d, geth's %q", round, i, el.ID, el.Result, el.Error, i, want.Result)
			}
		}
		sent := seen()
		slices.Sort(sent) // the hundreds go at once, in any order
		slices.Sort(wantSizes)
		if !slices.Equal(sent, wantSizes) {
			t.Errorf("round %d: geth was sent batches of %v calls, want %v", round, sent, wantSizes)
		}
	}
}

// TestBatch_ReadNotificationsReachGethInOneBatch sends a batch of 100
// eth_getBalance notifications and two calls, through a proxy that notes
// the size of every batch geth is sent. geth answers a batch of
// notifications HTTP 200 with no body; through rpcdash the notifications
// reach geth in one upstream batch of their own, the calls in another,
// none alone (they were 100 requests of their own, each hedged), and only
// the calls are answered, with geth's answers.
func TestBatch_ReadNotificationsReachGethInOneBatch(t *testing.T) {
	t.Parallel()
	requireTools(t)
	g := startGeth(t)
	seen := batchSizes(t, g)
	r := startRpcdash(t, g)
	r.drain("simA")

	const n = 100
	var notes, batch bytes.Buffer
	for i := range n {
		if i > 0 {
			notes.WriteByte(',')
		}
		fmt.Fprintf(&notes, `{"jsonrpc":"2.0","method":"eth_getBalance","params":["%s","latest"]}`, devAddr)
	}
	if direct := mustPost(t, g.URL(), "["+notes.String()+"]"); len(direct.Body) != 0 {
		t.Fatalf("geth answered a batch of notifications %.200q, want nothing", direct.Body)
	}
	want := mustPost(t, g.URL(), fmt.Sprintf(`[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["%s","latest"]}]`, devAddr))
	fmt.Fprintf(&batch, `[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},%s,{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["%s","latest"]}]`, notes.String(), devAddr)
	seen()
	got := mustPost(t, r.URL(), batch.String())
	answeredBy(t, "geth", got.Header)
	var gotEls, wantEls []json.RawMessage
	if err := json.Unmarshal(got.Body, &gotEls); err != nil || json.Unmarshal(want.Body, &wantEls) != nil || len(gotEls) != 2 ||
		!bytes.Equal(gotEls[0], wantEls[0]) || !bytes.Equal(gotEls[1], wantEls[1]) {
		t.Fatalf("rpcdash answered %s (%v), want geth's %s", got.Body, err, want.Body)
	}
	if a := got.Header.Get("X-Rpcdash-Attempts"); a != fmt.Sprint(n+2) {
		t.Errorf("X-Rpcdash-Attempts %s, want %d: one per element, none sent alone", a, n+2)
	}
	sent := seen()
	slices.Sort(sent)
	if !slices.Equal(sent, []int{2, n}) {
		t.Errorf("geth was sent batches of %v calls, want one of the 2 calls and one of the %d notifications", sent, n)
	}
}

// batchSizes puts a proxy that notes the size of every batch it relays in
// front of g (rpcdash's endpoint "geth" is then the proxy); seen returns
// the sizes since it was last called.
func batchSizes(t *testing.T, g *gethNode) (seen func() []int) {
	var mu sync.Mutex
	var sizes []int
	target, _ := url.Parse(g.URL())
	relay := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if bytes.HasPrefix(body, []byte("[")) {
			var calls []json.RawMessage
			json.Unmarshal(body, &calls)
			mu.Lock()
			sizes = append(sizes, len(calls))
			mu.Unlock()
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		relay.ServeHTTP(w, req)
	}))
	t.Cleanup(proxy.Close)
	g.http = strings.TrimPrefix(proxy.URL, "http://")
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(sizes)
		sizes = nil
		return out
	}
}
