package engine_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// firstWinsNode answers every call with a result, reading the request's
// method from its first "method" member, as a gateway that picks members
// with gjson or jsonparser does (Go's encoding/json, and rpcdash, read the
// last). It counts the methods it carried out.
type firstWinsNode struct {
	srv  *httptest.Server
	mu   sync.Mutex
	runs map[string]int
}

func startFirstWinsNode(t *testing.T) *firstWinsNode {
	n := &firstWinsNode{runs: map[string]int{}}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		method := ""
		if _, rest, ok := bytes.Cut(body, []byte(`"method":"`)); ok {
			method, _, _ = strings.Cut(string(rest), `"`)
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(body, &req)
		n.mu.Lock()
		n.runs[method]++
		n.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":"0x1"}`))
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *firstWinsNode) ran(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.runs[method]
}

// A request naming two methods was routed by its last one and sent as it
// came: a write placed first and a read last was classed a read, hedged at
// once to the second endpoint, and a node reading the first member sent
// the transaction twice. It is refused with -32600 and sent nowhere; the
// same method given twice is one method, and is served.
func TestServer_TwoDifferentMethodsInOneRequestRefused(t *testing.T) {
	nodes := []*firstWinsNode{startFirstWinsNode(t), startFirstWinsNode(t)}
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled, c.Hedge.Delay = true, "0s" // a read gets its duplicate at once
		c.Endpoints = []engine.EndpointConfig{
			{Name: "n0", URL: nodes[0].srv.URL, Provider: "p0"},
			{Name: "n1", URL: nodes[1].srv.URL, Provider: "p1"},
		}
	})
	r := h.post(`{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x0000000000000000000000000000000000000000","latest"],"method":"eth_getBalance"}`)
	sent := nodes[0].ran("eth_sendRawTransaction") + nodes[1].ran("eth_sendRawTransaction")
	if e := r.rpcError(); e == nil || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), `"method" is given more than once`) {
		t.Errorf("answered HTTP %d %s, want -32600 naming the two methods", r.status, r.body)
	}
	if sent != 0 {
		t.Errorf("the transaction was carried out %d times by nodes reading the first method", sent)
	}
	r = h.post(`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000000","latest"],"method":"eth_getBalance"}`)
	mustOK(t, r)
	t.Logf("two methods: %s; one method given twice: %s", h.post(`{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","method":"eth_getBalance"}`).body, r.body)
}

// A request with two different ids went out as it came while rpcdash
// waited for the last: a node reading the first answered under it, the
// answer was taken for another request's and the endpoint charged, on
// every endpoint in turn (three such requests opened a healthy endpoint's
// breaker; the client got -32603). It now goes out with every id the last
// one, as geth reads it, and is answered under that id, no one charged.
func TestServer_TwoDifferentIDsInOneRequestGoOutAsTheLast(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	firstID := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, rest, _ := bytes.Cut(body, []byte(`"id":`))
		id, _, _ := bytes.Cut(rest, []byte(`,`))
		mu.Lock()
		seen[string(id)]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":"0x1"}`))
	}))
	t.Cleanup(firstID.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{
			{Name: "n0", URL: firstID.URL, Provider: "p0"},
			{Name: "n1", URL: firstID.URL + "/", Provider: "p1"},
		}
	})
	for i := 0; i < 5; i++ {
		r := h.post(`{"jsonrpc":"2.0","id":1,"id":2,"method":"eth_chainId"}`)
		if r.status != 200 || string(r.body) != `{"jsonrpc":"2.0","id":2,"result":"0x1"}` {
			t.Fatalf("two ids: HTTP %d %s, want the answer under id 2", r.status, r.body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["1"] != 0 || seen["2"] != 5 {
		t.Fatalf("the node read ids %v, want id 2 five times", seen)
	}
	for _, ep := range h.eng.Snapshot().Endpoints {
		if ep.Breaker.State != engine.BreakerClosed || ep.Rates.Failures != 0 {
			t.Fatalf("%s charged: breaker %v, %d failures", ep.Name, ep.Breaker.State, ep.Rates.Failures)
		}
	}
}
