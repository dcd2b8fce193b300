package engine_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// methodServer is an upstream that serves some methods and answers any
// other -32601 "method not found", as a node or a provider without the
// method does.
type methodServer struct {
	srv    *httptest.Server
	delay  time.Duration   // before every answer
	serves map[string]bool // answered "0x1"
	mu     sync.Mutex
	hangs  map[string]bool // never answered
	cuts   map[string]bool // read whole, then the connection closed unanswered
	got    map[string]int  // requests received by method
}

func newMethodServer(t *testing.T, delay time.Duration, serves, hangs, cuts []string) *methodServer {
	s := &methodServer{delay: delay, serves: map[string]bool{"eth_chainId": true, "eth_blockNumber": true},
		hangs: map[string]bool{}, cuts: map[string]bool{}, got: map[string]int{}}
	for _, m := range serves {
		s.serves[m] = true
	}
	for _, m := range hangs {
		s.hangs[m] = true
	}
	for _, m := range cuts {
		s.cuts[m] = true
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *methodServer) received(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[method]
}

func (s *methodServer) serve(w http.ResponseWriter, r *http.Request) {
	var call struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.NewDecoder(r.Body).Decode(&call) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.got[call.Method]++
	hangs, cuts := s.hangs[call.Method], s.cuts[call.Method]
	s.mu.Unlock()
	if hangs {
		<-r.Context().Done()
		return
	}
	if cuts {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
		return
	}
	select {
	case <-time.After(s.delay):
	case <-r.Context().Done():
		return
	}
	answer := `"result":"0x1"`
	if !s.serves[call.Method] {
		answer = `"error":{"code":-32601,"message":"the method ` + call.Method + ` does not exist/is not available"}`
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(call.ID) + `,` + answer + `}`))
}

// methodNotFoundPool is a pool of u, the quicker, which has none of the
// methods, and h, which serves served, never answers hung and cuts the
// connection of cut: u is asked first.
func methodNotFoundPool(t *testing.T, served, hung, cut []string, mut func(*engine.Config)) (*harness, *methodServer, *methodServer) {
	u := newMethodServer(t, 0, nil, nil, nil)
	hs := newMethodServer(t, 30*time.Millisecond, served, hung, cut)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "u", URL: u.srv.URL, Provider: "pu"}, {Name: "h", URL: hs.srv.URL, Provider: "ph"}}
		if mut != nil {
			mut(c)
		}
	})
	// Each endpoint's pace, learnt from probes, puts u first.
	for range 10 {
		for _, name := range []string{"u", "h"} {
			if _, err := h.eng.Probe(ctxT(t, 5*time.Second), name, "eth_chainId", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return h, u, hs
}

// A -32601 "method not found" says the endpoint did not run the call, so a
// write, or a method in no table, goes on to the next endpoint as a read
// does: only one endpoint served alchemy_getTokenBalances (a provider's
// own method, in no table) and the client had the other's -32601.
func TestMethodNotFound_AWriteGoesToAnEndpointThatServesIt(t *testing.T) {
	methods := []string{"alchemy_getTokenBalances", "eth_sendRawTransactionConditional"}
	h, u, hs := methodNotFoundPool(t, methods, nil, nil, nil)
	for i, m := range methods {
		r := h.call(i, m, "0x01")
		mustOK(t, r)
		if r.endpoint != "h" || r.attempts != 2 || u.received(m) != 1 || hs.received(m) != 1 {
			t.Fatalf("%s answered by %s after %d attempts, u received it %d times and h %d; want u's -32601 then h's answer, each once",
				m, r.endpoint, r.attempts, u.received(m), hs.received(m))
		}
	}
}

// With every endpoint answering -32601 the client has it as they said it,
// each endpoint asked once.
func TestMethodNotFound_EveryEndpointsRelayed(t *testing.T) {
	h, u, hs := methodNotFoundPool(t, nil, nil, nil, nil)
	const m = "eth_sendBundle"
	r := h.call(1, m, "0x01")
	e := r.rpcError()
	if e == nil || e["code"].(float64) != -32601 || !strings.Contains(e["message"].(string), "does not exist/is not available") {
		t.Fatalf("HTTP %d %s; want the endpoints' -32601", r.status, r.body)
	}
	if u.received(m) != 1 || hs.received(m) != 1 {
		t.Fatalf("u received it %d times, h %d; want once each", u.received(m), hs.received(m))
	}
}

// A write that went on from an endpoint's -32601 to one that may have run
// it but gave no answer is not answered that -32601, which would say it
// failed: past its deadline the error names only the second as having it;
// cut after it went out, the second's failure is the error.
func TestMethodNotFound_NotRelayedWhenAnotherMayHaveRunIt(t *testing.T) {
	t.Parallel()
	const m = "eth_sendRawTransactionConditional"
	h, u, hs := methodNotFoundPool(t, nil, []string{m}, nil, func(c *engine.Config) { c.Server.RequestTimeout = 500 * time.Millisecond })
	r := h.call(1, m, "0x01")
	if e := r.rpcError(); e == nil || !strings.Contains(e["message"].(string), "sent to h, which may have carried it out") {
		t.Fatalf("hung: HTTP %d %s; want the timeout naming h alone", r.status, r.body)
	}
	if u.received(m) != 1 || hs.received(m) != 1 {
		t.Fatalf("hung: u received it %d times, h %d; want once each", u.received(m), hs.received(m))
	}

	h, u, hs = methodNotFoundPool(t, nil, nil, []string{m}, nil)
	r = h.call(1, m, "0x01")
	if e := r.rpcError(); e == nil || e["code"].(float64) == -32601 || !strings.Contains(e["message"].(string), "last: h: ") {
		t.Fatalf("cut: HTTP %d %s; want h's failure", r.status, r.body)
	}
	if u.received(m) != 1 || hs.received(m) != 1 {
		t.Fatalf("cut: u received it %d times, h %d; want once each", u.received(m), hs.received(m))
	}
}
