package engine_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
)

// The answers to malformed or odd requests are geth's (measured against
// geth --dev): a proxy in front of geth must not answer worse than geth.
func TestServer_EdgeRequestsAnsweredAsGethDoes(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	for _, c := range []struct {
		name, body string
		status     int
		want       string // the whole answer
	}{
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: \"method\" is empty"}}`},
		{"empty method notification", `{"jsonrpc":"2.0","method":""}`, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"method\" is empty"}}`},
		{"method over 2048 bytes", `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", 10000) + `"}`, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: method name too long: 10000 \u003e 2048"}}`},
		{"params a number", `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":5}`, 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: \"params\" must be an array or object"}}`},
		{"notification", `{"jsonrpc":"2.0","method":"eth_blockNumber"}`, 200, ``},
		{"batch of notifications", `[{"jsonrpc":"2.0","method":"eth_blockNumber"}]`, 200, ``},
	} {
		r := h.post(c.body)
		var got, want any
		json.Unmarshal(r.body, &got)
		json.Unmarshal([]byte(c.want), &want)
		if r.status != c.status || !reflect.DeepEqual(got, want) || (c.want == "") != (len(r.body) == 0) {
			t.Errorf("%s: HTTP %d %s\nwant HTTP %d %s", c.name, r.status, r.body, c.status, c.want)
		}
	}
	r := h.post(`{"jsonrpc":"2.0","id":true,"method":"eth_blockNumber"}`)
	mustOK(t, r)
	if !strings.Contains(string(r.body), `"id":true`) {
		t.Errorf("boolean id not echoed: %s", r.body)
	}
	if n := h.sims[0].MethodCount(""); n != 0 {
		t.Errorf("an empty method reached the endpoint %d times", n)
	}
}

// A member named like a request member but for case ("Method", "ID") is
// read as that member by nodes decoding with Go's encoding/json: rpcdash,
// reading JSON-RPC's exact names, would have routed one request and the
// node carried out another. A write behind a read's name reached all three
// endpoints (failed over as a read); "ID" beside "id" made every endpoint's
// answer carry "another request's id" and opened breakers; a lone "Id" was
// answered as a notification, nothing. Now each is refused, sent nowhere.
func TestServer_AMemberNamedLikeAnotherButForCaseIsRefusedNotSent(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)})
	for _, c := range []struct{ body, id, member string }{
		{`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","Method":"eth_sendRawTransaction","params":["0x02f8"]}`, `1`, `\"Method\" differs from \"method\"`},
		{`{"jsonrpc":"2.0","id":1,"ID":2,"method":"eth_getBalance","params":["0x3535353535353535353535353535353535353535","latest"]}`, `null`, `\"ID\" differs from \"id\"`},
		{`{"jsonrpc":"2.0","Id":7,"method":"eth_chainId"}`, `null`, `\"Id\" differs from \"id\"`},
	} {
		r := h.post(c.body)
		if r.status != 200 || !strings.Contains(string(r.body), `"id":`+c.id+`,"error":{"code":-32600`) || !strings.Contains(string(r.body), c.member) {
			t.Errorf("%s: HTTP %d %s; want a -32600 error with id %s naming the member (%s)", c.body, r.status, r.body, c.id, c.member)
		}
	}
	for _, m := range []string{"eth_sendRawTransaction", "eth_getBalance", "eth_chainId"} {
		if n := h.upstreamCount(m); n != 0 {
			t.Errorf("%s reached the endpoints %d times", m, n)
		}
	}
	for _, ep := range h.status().Endpoints {
		if ep.Breaker.ConsecutiveFailures != 0 || ep.Rates.Attempts != 0 {
			t.Errorf("%s charged: %d failures in a row, %d attempts", ep.Name, ep.Breaker.ConsecutiveFailures, ep.Rates.Attempts)
		}
	}
}

// Method names come from clients: a name no node serves (control
// characters, kilobytes long) is counted as "other", never as a status row
// or metrics label of its own.
func TestServer_OddMethodNamesCountedAsOther(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	odd := []string{"eth_blockNumber\x01x", strings.Repeat("y", 2000), "a b", ""}
	for i, m := range odd {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": m})
		r := h.post(string(b))
		if r.status != 200 || r.rpcError() == nil {
			t.Fatalf("%q: HTTP %d %s", m, r.status, r.body)
		}
	}
	mustOK(t, h.call(9, "eth_blockNumber"))
	var names []string
	for name := range h.status().Methods {
		names = append(names, name)
	}
	if strings.Join(names, ",") != "eth_blockNumber,other" && strings.Join(names, ",") != "other,eth_blockNumber" {
		t.Errorf("status methods %q, want eth_blockNumber and other", names)
	}
	if got := h.status().Methods["other"].Requests; got != 3 {
		t.Errorf("other counted %d requests, want 3 (the empty method is refused before)", got)
	}
	resp, err := h.client.Get(h.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	for _, line := range strings.Split(sb.String(), "\n") {
		if strings.Contains(line, `method=""`) || strings.Contains(line, "yyyy") || strings.Contains(line, `\x01`) || strings.Contains(line, "a b") {
			t.Errorf("metrics line with an odd method label: %.120s", line)
		}
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics HTTP %d", resp.StatusCode)
	}
}
