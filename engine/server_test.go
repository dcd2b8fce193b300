package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

func TestServer_CodecThroughThePort(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Server.MaxBatch = 3
		c.Server.MaxBodyBytes = 2048
	}, sim.Config{})
	cases := []struct {
		name, body string
		status     int
		want       string // substring of the answer, byte for byte
	}{
		{"number id", `{"jsonrpc":"2.0","id":7,"method":"eth_chainId"}`, 200, `{"jsonrpc":"2.0","id":7,"result":"0x7a69"}`},
		{"big number id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"eth_chainId"}`, 200, `"id":123456789012345678901234567890,`},
		{"fraction id", `{"jsonrpc":"2.0","id":1.50,"method":"eth_chainId"}`, 200, `"id":1.50,`},
		{"string id", `{"jsonrpc":"2.0","id":"abc\u00e9","method":"eth_chainId"}`, 200, `"id":"abc\u00e9"`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"eth_chainId"}`, 200, `"id":null,"result"`},
		{"parse error", `{"jsonrpc":`, 200, `"code":-32700`},
		{"not an object", `42`, 200, `"code":-32600`},
		{"empty batch", `[]`, 200, `"code":-32600`},
		{"wrong version keeps id", `{"jsonrpc":"1.0","id":9,"method":"eth_chainId"}`, 200, `"id":9,"error":{"code":-32600`},
		{"batch too large", `[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_chainId"},{"jsonrpc":"2.0","id":3,"method":"eth_chainId"},{"jsonrpc":"2.0","id":4,"method":"eth_chainId"}]`, 200, `"code":-32005`},
		{"body too large", `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["` + strings.Repeat("a", 3000) + `"]}`, 413, `max_body_bytes`},
		{"unknown method passes through", `{"jsonrpc":"2.0","id":1,"method":"nope_nothing"}`, 200, `"code":-32601`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.post(c.body)
			if r.status != c.status || !strings.Contains(string(r.body), c.want) {
				t.Fatalf("HTTP %d %s; want %d containing %s", r.status, r.body, c.status, c.want)
			}
		})
	}
}

// A notification is never answered, even when its params are not an array
// or object (geth sends nothing): a client does not expect an answer with
// no id in its batch's answers. A request it cannot read at all is still
// answered with id null, as geth does.
func TestServer_NotificationWithBadParamsIsNotAnswered(t *testing.T) {
	h := newHarness(t, nil, sim.Config{})
	const bad = `{"jsonrpc":"2.0","method":"eth_chainId","params":5}`
	cases := []struct{ name, body, want string }{
		{"single", bad, ``},
		{"batch of it", `[` + bad + `]`, ``},
		{"beside a call", `[` + bad + `,{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]`, `[{"jsonrpc":"2.0","id":1,"result":"0x7a69"}]`},
		{"invalid request still answered", `{"jsonrpc":"2.0","method":1}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"method\" must be a string"}}`},
	}
	for _, c := range cases {
		r := h.post(c.body)
		if r.status != http.StatusOK || string(r.body) != c.want {
			t.Errorf("%s: HTTP %d %s; want 200 %s", c.name, r.status, r.body, c.want)
		}
	}
}

func TestServer_BatchOrderNotificationsAndHeaders(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)})
	r := h.post(`[{"jsonrpc":"2.0","id":"a","method":"eth_chainId"},
		{"jsonrpc":"2.0","method":"eth_blockNumber"},
		5,
		{"jsonrpc":"2.0","id":3,"method":"eth_sendRawTransaction","params":["0x01"]},
		{"jsonrpc":"2.0","id":null,"method":"net_version"}]`)
	var out []map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	ids := []string{}
	for _, o := range out {
		ids = append(ids, string(o["id"]))
	}
	if strings.Join(ids, ",") != `"a",null,3,null` {
		t.Fatalf("ids in order: %v (%s)", ids, r.body)
	}
	if _, ok := out[1]["error"]; !ok {
		t.Fatalf("the invalid element has no error: %s", out[1])
	}
	if r.endpoint == "" || r.attempts != 4 {
		t.Fatalf("batch headers: endpoint %q attempts %d", r.endpoint, r.attempts)
	}
	// A lone notification is executed and not answered.
	n := h.post(`{"jsonrpc":"2.0","method":"eth_sendRawTransaction","params":["0x02"]}`)
	if n.status != http.StatusOK || len(n.body) != 0 { // as geth answers
		t.Fatalf("notification answered: %d %s", n.status, n.body)
	}
	if got := len(h.sims[0].Submissions()) + len(h.sims[1].Submissions()); got != 2 {
		t.Fatalf("%d submissions, want 2", got)
	}
	// An empty GET is a load balancer's health check, which geth answers
	// 200; with a query it is no JSON-RPC request.
	for path, want := range map[string]int{"": 200, "/": 200, "/?x=1": http.StatusMethodNotAllowed} {
		resp, err := h.client.Get(h.rpc + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || want == 200 && !strings.Contains(string(body), `"ok":true`) {
			t.Fatalf("GET %q answered %d %s, want %d", path, resp.StatusCode, body, want)
		}
	}
	// A websocket handshake is an empty GET too: it gets a refusal that
	// says so, not the health answer ("unexpected response 200").
	req, _ := http.NewRequest(http.MethodGet, h.rpc+"/", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotImplemented || !strings.Contains(string(body), "websocket is not supported") || !strings.Contains(string(body), `"error"`) {
		t.Fatalf("websocket handshake answered %d %s, want 501 and a JSON-RPC error saying why", resp.StatusCode, body)
	}
	resp, err = h.client.Post(h.rpc, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"error"`) {
		t.Fatalf("empty POST answered %d %s, want a JSON-RPC error", resp.StatusCode, body)
	}
	resp, err = h.client.Get(h.rpc + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	h.adminDo("POST", "/v1/endpoints/s0/drain", "")
	h.adminDo("POST", "/v1/endpoints/s1/drain", "")
	resp, _ = h.client.Get(h.rpc + "/healthz")
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("healthz with nothing routable: %d", resp.StatusCode)
	}
}

func TestServer_FiltersPinnedToTheirEndpoint(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{}, sim.Config{})
	owners := map[string]string{}
	for i := 0; i < 6; i++ {
		r := h.call(i, "eth_newFilter", map[string]any{"fromBlock": "latest"})
		mustOK(t, r)
		owners[strings.Trim(resultString(t, r), `"`)] = r.endpoint
	}
	for round := 0; round < 3; round++ {
		for id, owner := range owners {
			r := h.call(1, "eth_getFilterChanges", id)
			mustOK(t, r)
			if r.endpoint != owner {
				t.Fatalf("filter %s created on %s polled on %s", id, owner, r.endpoint)
			}
		}
	}
	for id := range owners {
		mustOK(t, h.call(1, "eth_uninstallFilter", id))
		r := h.call(1, "eth_getFilterChanges", id)
		if e := r.rpcError(); e == nil || !strings.Contains(e["message"].(string), "filter not found") {
			t.Fatalf("uninstalled filter still answered: %s", r.body)
		}
	}
	// As geth answers them over HTTP.
	for method, want := range map[string]float64{"eth_subscribe": -32601, "eth_unsubscribe": -32000} {
		r := h.call(1, method, "newHeads")
		if e := r.rpcError(); e == nil || e["code"] != want || !strings.Contains(e["message"].(string), "HTTP only") {
			t.Fatalf("%s not refused as geth refuses it (code %v): %s", method, want, r.body)
		}
	}
}

// A node answers eth_uninstallFilter false for a filter it does not hold
// (expired, or uninstalled already); clients call it when they stop
// watching (ethers' FilterIdSubscriber, web3.py's uninstall_filter) and
// take an error there for a failure.
func TestServer_UninstallUnknownFilterAnswersFalse(t *testing.T) {
	h := newHarness(t, nil, sim.Config{})
	r := h.call(1, "eth_newBlockFilter")
	mustOK(t, r)
	var id string
	json.Unmarshal([]byte(resultString(t, r)), &id)
	mustOK(t, h.call(2, "eth_uninstallFilter", id))
	for _, fid := range []string{id, "0x1234"} {
		r := h.call(3, "eth_uninstallFilter", fid)
		if r.status != http.StatusOK || string(r.body) != `{"jsonrpc":"2.0","id":3,"result":false}` {
			t.Fatalf("uninstalling unknown filter %s: HTTP %d %s", fid, r.status, r.body)
		}
	}
	if n := h.sims[0].Counters().ByMethod["eth_uninstallFilter"]; n != 1 {
		t.Fatalf("sim saw %d uninstalls, want 1 (unknown ids answered locally)", n)
	}
}

func TestAdmin_FaultsAndBadInput(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)}, sim.Config{Latency: fixed(0)})
	for _, bad := range []string{`{"mode":"explode"}`, `{"mode":"error","rate":2}`, `{"mode":"latency","latency":"soon"}`, `not json`, `{"mode":"error","extra":1}`} {
		if code, b := h.adminDo("POST", "/v1/endpoints/s0/fault", bad); code != 400 || !strings.Contains(string(b), "error") {
			t.Fatalf("%s accepted: %d %s", bad, code, b)
		}
	}
	if code, _ := h.adminDo("POST", "/v1/endpoints/zz/fault", `{"mode":"error"}`); code != 404 {
		t.Fatalf("unknown endpoint: %d", code)
	}
	// latency on every request, for a bounded time
	if code, b := h.adminDo("POST", "/v1/endpoints/s0/fault", `{"mode":"latency","latency":"120ms","duration":"30s"}`); code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	h.adminDo("POST", "/v1/endpoints/s1/drain", "")
	r := h.call(1, "eth_chainId")
	mustOK(t, r)
	if r.took < 120e6 {
		t.Fatalf("latency fault not applied: %s", r.took)
	}
	if ep := h.endpoint("s0"); ep.Fault == nil || ep.Fault.Mode != engine.FaultLatency || ep.Fault.Expires.IsZero() {
		t.Fatalf("status fault %+v", ep.Fault)
	}
	// a fault that already expired is gone, with an event
	if code, _ := h.adminDo("POST", "/v1/endpoints/s0/fault", `{"mode":"error","duration":"1ns"}`); code != 200 {
		t.Fatal("inject")
	}
	mustOK(t, h.call(2, "eth_chainId"))
	if h.endpoint("s0").Fault != nil {
		t.Fatal("expired fault still shown")
	}
	expired := false
	for _, ev := range h.events() {
		expired = expired || ev.Type == engine.EventFault && ev.Message == "fault expired"
	}
	if !expired {
		t.Fatal("no expiry event")
	}
}

func TestAdmin_TokenRequiredWhenConfigured(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.AdminToken = "s3cret-token" }, sim.Config{})
	if code, _ := h.adminDo("GET", "/v1/status", ""); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	req, _ := http.NewRequest("GET", h.admin+"/v1/status", nil)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("with token: %d", resp.StatusCode)
	}
	// The scheme is case-insensitive (RFC 9110); the token is not.
	for auth, want := range map[string]int{"bearer s3cret-token": 200, "BEARER s3cret-token": 200, "Bearer S3CRET-TOKEN": 401, "Basic s3cret-token": 401, "s3cret-token": 401} {
		req, _ := http.NewRequest("GET", h.admin+"/v1/status", nil)
		req.Header.Set("Authorization", auth)
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Authorization %q: HTTP %d, want %d", auth, resp.StatusCode, want)
		}
	}
	cfg := baseConfig()
	cfg.Server.Admin = "0.0.0.0:0"
	cfg.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	if _, err := engine.New(cfg, engine.Options{}); err == nil || !strings.Contains(err.Error(), "server.admin_token") {
		t.Fatalf("non-loopback admin without token: %v", err)
	}
}

func TestAdmin_LatencyFaultAliases(t *testing.T) {
	h := newHarness(t, nil, sim.Config{})
	for body, want := range map[string]string{
		`{"mode":"latency","delay":"150ms"}`: "150ms",
		`{"mode":"latency","latency_ms":75}`: "75ms",
		`{"mode":"latency"}`:                 "500ms",
	} {
		if code, b := h.adminDo("POST", "/v1/endpoints/s0/fault", body); code != 200 {
			t.Fatalf("%s: %d %s", body, code, b)
		}
		if got := h.endpoint("s0").Fault.Latency.String(); got != want {
			t.Fatalf("%s: latency %s, want %s", body, got, want)
		}
	}
}

// When nothing can take a request the client's error says, per endpoint,
// why.
func TestServer_NoRouteErrorNamesEachEndpointsReason(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{RetryAfter: 30 * time.Second})
	h.adminDo("POST", "/v1/endpoints/s0/drain", "")
	h.sims[1].SetMode(sim.ModeRateLimit)
	h.call(1, "eth_getBalance", addr, "latest") // s1 answers 429 and backs off
	e := h.call(2, "eth_getBalance", addr, "latest").rpcError()
	msg, _ := e["message"].(string)
	for _, want := range []string{"no routable endpoint", "s0: drained", "s1: backing off after HTTP 429 for"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

// Two nodes that number their filters alike hand out the same id; each
// client's filter must still be polled and uninstalled where it lives.
func TestServer_FiltersWithTheSameUpstreamIDStaySeparate(t *testing.T) {
	h := newHarness(t, nil, sim.Config{SequentialFilterIDs: true}, sim.Config{SequentialFilterIDs: true})
	create := func(on, drained string) string {
		t.Helper()
		h.adminDo("POST", "/v1/endpoints/"+drained+"/drain", "")
		h.adminDo("POST", "/v1/endpoints/"+on+"/undrain", "")
		r := h.call(1, "eth_newFilter", map[string]any{"fromBlock": "latest"})
		mustOK(t, r)
		if r.endpoint != on {
			t.Fatalf("filter created on %s, want %s", r.endpoint, on)
		}
		var id string
		json.Unmarshal([]byte(resultString(t, r)), &id)
		return id
	}
	id1 := create("s0", "s1")
	id2 := create("s1", "s0")
	h.adminDo("POST", "/v1/endpoints/s0/undrain", "")
	t.Logf("client ids %s %s; sims hold %d and %d filters", id1, id2, h.sims[0].Filters(), h.sims[1].Filters())
	if id1 == id2 {
		t.Fatalf("both clients got filter id %s", id1)
	}
	poll := func(id, want string) {
		t.Helper()
		r := h.call(2, "eth_getFilterChanges", id)
		mustOK(t, r)
		if r.endpoint != want {
			t.Fatalf("filter %s of %s polled on %s", id, want, r.endpoint)
		}
	}
	poll(id1, "s0")
	poll(id2, "s1")
	r := h.call(3, "eth_uninstallFilter", id2)
	mustOK(t, r)
	if r.endpoint != "s1" || resultString(t, r) != "true" {
		t.Fatalf("uninstall answered by %s: %s", r.endpoint, r.body)
	}
	if a, b := h.sims[0].Filters(), h.sims[1].Filters(); a != 1 || b != 0 {
		t.Fatalf("after uninstalling client 2's filter the sims hold %d and %d filters, want 1 and 0", a, b)
	}
	poll(id1, "s0")
	mustOK(t, h.call(4, "eth_getFilterLogs", id1))
	if e := h.call(5, "eth_getFilterChanges", id2).rpcError(); e == nil || !strings.Contains(e["message"].(string), "filter not found") {
		t.Fatalf("uninstalled filter still answered: %v", e)
	}
}
