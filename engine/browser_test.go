package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// send makes one request with the given headers ("Host" sets the Host).
func (h *harness) send(method, url, body string, headers map[string]string) (int, string) {
	h.t.Helper()
	code, _, b := h.sendFor(method, url, body, headers)
	return code, b
}

// sendFor is send that also returns the answer's headers.
func (h *harness) sendFor(method, url, body string, headers map[string]string) (int, http.Header, string) {
	h.t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const chainID = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`

// What a web page could make the operator's browser send is refused on
// both ports, naming the setting that would allow it, and changes nothing.
func TestBrowser_RebindingCrossSiteAndSimpleRequestsRefused(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = true }, sim.Config{Latency: fixed(0)})
	json := map[string]string{"Content-Type": "application/json"}
	with := func(k, v string) map[string]string {
		return map[string]string{"Content-Type": "application/json", k: v}
	}
	cases := []struct {
		name, method, url, body string
		headers                 map[string]string
		status                  int
		setting                 string
	}{
		{"rpc with a rebound Host", "POST", h.rpc, chainID, with("Host", "rebind.example"), 403, "server.vhosts"},
		{"rpc with a rebound Host and port", "POST", h.rpc, chainID, with("Host", "rebind.example:8545"), 403, "server.vhosts"},
		{"rpc from a foreign Origin", "POST", h.rpc, chainID, with("Origin", "https://evil.example"), 403, "server.cors_origins"},
		{"rpc write from a foreign Origin", "POST", h.rpc, `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x01"]}`, with("Origin", "null"), 403, "server.cors_origins"},
		{"healthz with a rebound Host", "GET", h.rpc + "/healthz", "", with("Host", "rebind.example"), 403, "server.vhosts"},
		{"admin status with a rebound Host", "GET", h.admin + "/v1/status", "", with("Host", "rebind.example"), 403, "server.vhosts"},
		{"admin fault from a foreign Origin", "POST", h.admin + "/v1/endpoints/s0/fault", `{"mode":"error"}`, with("Origin", "https://evil.example"), 403, "server.cors_origins"},
		{"admin fault as a page's text/plain", "POST", h.admin + "/v1/endpoints/s0/fault", `{"mode":"error"}`, map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, 403, "server.cors_origins"},
		{"admin fault as a sandboxed page's form", "POST", h.admin + "/v1/endpoints/s0/fault", `{"mode":"error"}`, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "null"}, 403, "server.cors_origins"},
		{"admin drain from a page without Content-Type", "POST", h.admin + "/v1/endpoints/s0/drain", "", map[string]string{"Origin": "null"}, 403, "server.cors_origins"},
		{"admin fault clear from a foreign Origin", "DELETE", h.admin + "/v1/endpoints/s0/fault", "", with("Origin", "https://evil.example"), 403, "server.cors_origins"},
		{"admin hedge from a foreign Origin", "PUT", h.admin + "/v1/hedge", `{"enabled":false}`, with("Origin", "https://evil.example"), 403, "server.cors_origins"},
	}
	for _, c := range cases {
		code, body := h.send(c.method, c.url, c.body, c.headers)
		if code != c.status || !strings.Contains(body, c.setting) {
			t.Errorf("%s: HTTP %d %s; want %d naming %s", c.name, code, body, c.status, c.setting)
		}
	}
	s := h.status()
	if ep := s.Endpoints[0]; ep.Fault != nil || ep.Drained || !s.Hedge.Enabled {
		t.Fatalf("a refused call changed the pool: fault %+v drained %v hedging %v", ep.Fault, ep.Drained, s.Hedge.Enabled)
	}
	if n := h.sims[0].Counters().Total; n != 0 {
		t.Fatalf("the upstream got %d requests from refused calls", n)
	}
	// The loopback names a local client uses are accepted, with any port;
	// so is any IP address, as geth accepts it (rebinding needs a name): a
	// client through a port forward or a container's gateway.
	for _, host := range []string{"localhost", "localhost:8545", "127.0.0.1", "[::1]:8545", "LOCALHOST.", "10.1.2.3", "172.17.0.1:8545", "[fe80::1]:8545"} {
		if code, body := h.send("POST", h.rpc, chainID, with("Host", host)); code != 200 {
			t.Errorf("Host %s: HTTP %d %s", host, code, body)
		}
	}
	if code, body := h.send("POST", h.admin+"/v1/endpoints/s0/drain", "", json); code != 200 {
		t.Errorf("drain with Content-Type: application/json: HTTP %d %s", code, body)
	}
	if code, body := h.send("POST", h.admin+"/v1/endpoints/s0/undrain", "", map[string]string{"Content-Type": "application/json; charset=utf-8"}); code != 200 {
		t.Errorf("undrain with a charset: HTTP %d %s", code, body)
	}
}

// server.vhosts and server.cors_origins open the ports to the names and
// pages listed, CORS preflight included.
func TestBrowser_ListedHostsAndOriginsAllowed(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Server.VHosts = []string{"rpcdash.lan"}
		c.Server.CORSOrigins = []string{"http://localhost:3000", "https://*.dapp.example"}
	}, sim.Config{Latency: fixed(0)})
	with := func(kv ...string) map[string]string {
		m := map[string]string{"Content-Type": "application/json"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	if code, body := h.send("POST", h.rpc, chainID, with("Host", "rpcdash.lan:8545")); code != 200 {
		t.Errorf("listed vhost: HTTP %d %s", code, body)
	}
	// A list replaces the defaults, as geth's --http.vhosts does.
	if code, _ := h.send("POST", h.rpc, chainID, with("Host", "localhost")); code != 403 {
		t.Errorf("localhost with server.vhosts = [rpcdash.lan]: HTTP %d, want 403", code)
	}
	for _, origin := range []string{"http://localhost:3000", "https://app.dapp.example"} {
		req, _ := http.NewRequest("OPTIONS", h.rpc, nil)
		req.Host = "rpcdash.lan"
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		// The headers an SDK adds (thirdweb's x-client-id) are allowed, as
		// geth allows them.
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-client-id")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 || resp.Header.Get("Access-Control-Allow-Origin") != origin ||
			!strings.Contains(strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "x-client-id") {
			t.Errorf("preflight from %s: HTTP %d, Allow-Origin %q, Allow-Headers %q", origin, resp.StatusCode,
				resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Allow-Headers"))
		}
		code, body := h.send("POST", h.rpc, chainID, with("Host", "rpcdash.lan", "Origin", origin))
		var a struct{ Result string }
		if code != 200 || json.Unmarshal([]byte(body), &a) != nil || a.Result == "" {
			t.Errorf("POST from %s: HTTP %d %s", origin, code, body)
		}
	}
	if code, _ := h.send("POST", h.rpc, chainID, with("Host", "rpcdash.lan", "Origin", "https://dapp.example.evil")); code != 403 {
		t.Errorf("unlisted origin: HTTP %d, want 403", code)
	}
	// A listed page's POST to the admin API needs the JSON Content-Type,
	// the body a page cannot send without a preflight.
	fault := h.admin + "/v1/endpoints/s0/fault"
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		code, body := h.send("POST", fault, `{"mode":"error"}`, map[string]string{"Host": "rpcdash.lan", "Origin": "http://localhost:3000", "Content-Type": ct})
		if code != 415 || !strings.Contains(body, "application/json") {
			t.Errorf("a listed page's POST as %q: HTTP %d %s; want 415 naming application/json", ct, code, body)
		}
	}
	if f := h.status().Endpoints[0].Fault; f != nil {
		t.Fatalf("a refused POST injected %+v", f)
	}
	if code, body := h.send("POST", fault, `{"mode":"error"}`, with("Host", "rpcdash.lan", "Origin", "http://localhost:3000")); code != 200 {
		t.Errorf("a listed page's POST as JSON: HTTP %d %s", code, body)
	}
}

func TestBrowser_AnyHostWithStar(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Server.VHosts = []string{"*"} }, sim.Config{Latency: fixed(0)})
	if code, body := h.send("POST", h.rpc, chainID, map[string]string{"Host": "anything.example"}); code != 200 {
		t.Errorf("vhosts = [*]: HTTP %d %s", code, body)
	}
}

// Refusals of the RPC port carry X-Rpcdash-Request-Id like every other
// answer, and their trace says what was refused: the browser guard's 403,
// a method other than POST and a websocket handshake had none.
func TestBrowser_RefusalsCarryARequestID(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	for _, c := range []struct {
		name, method string
		headers      map[string]string
		status       int
	}{
		{"a rebound Host", "POST", map[string]string{"Host": "rebind.example"}, 403},
		{"a foreign Origin", "POST", map[string]string{"Origin": "https://evil.example"}, 403},
		{"PUT", "PUT", nil, 405},
		{"a websocket handshake", "GET", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}, 501},
	} {
		headers := map[string]string{"Content-Type": "application/json"}
		for k, v := range c.headers {
			headers[k] = v
		}
		code, h2, _ := h.sendFor(c.method, h.rpc, chainID, headers)
		id := h2.Get(engine.HeaderRequestID)
		if code != c.status || id == "" {
			t.Errorf("%s: HTTP %d, request id %q; want %d with an id", c.name, code, id, c.status)
			continue
		}
		if code, b := h.adminDo("GET", "/v1/requests/"+id, ""); code != 200 || !strings.Contains(string(b), "-32600") {
			t.Errorf("%s: trace %s: HTTP %d %s", c.name, id, code, b)
		}
	}
}
