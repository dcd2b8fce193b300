package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

func TestRedaction_SecretsInURLsNeverLeave(t *testing.T) {
	secrets := []string{"0123456789abcdef0123456789abcdef", "TOPSECRETVALUE", "hunter2pass", "abcdef0123456789abcdef", "ANOTHERSECRET"}
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[0].URL += "/v3/0123456789abcdef0123456789abcdef?apikey=TOPSECRETVALUE"
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "dead",
			URL: "http://alice:hunter2pass@127.0.0.1:1/v2/abcdef0123456789abcdef?key=ANOTHERSECRET"})
		c.Breaker.Failures = 100 // keep both failing endpoints in play
	}, sim.Config{})
	h.sims[0].SetMode(sim.ModeError)

	var seen []string
	for i := 0; i < 5; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		if r.rpcError() == nil {
			t.Fatalf("expected an error, got %s", r.body)
		}
		seen = append(seen, string(r.body))
	}
	h.sims[0].SetMode(sim.ModeNormal)
	mustOK(t, h.call(9, "eth_getBalance", addr, "latest"))
	for _, path := range []string{"/v1/status", "/v1/events", "/metrics"} {
		code, b := h.adminDo("GET", path, "")
		if code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		seen = append(seen, string(b))
	}
	_, b := h.adminDo("POST", "/v1/endpoints/dead/fault", `{"mode":"latency"}`)
	seen = append(seen, string(b))
	seen = append(seen, h.logs.String())
	all := strings.Join(seen, "\n")
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Fatalf("secret %q leaked:\n%s", s, all)
		}
	}
	// The redacted form is still recognisable to an operator.
	if !strings.Contains(all, "127.0.0.1:1/REDACTED?REDACTED") || !strings.Contains(all, "connection failed") {
		t.Fatalf("status or errors lost the useful parts of the URL / cause:\n%s", all[:min(len(all), 3000)])
	}
}

// The rule does not depend on what a key looks like: a path or query of
// any length or shape is hidden, unless the endpoint is marked public_url.
// A short key in the path, which no "looks like a key" rule would catch,
// is hidden in status, events, metrics, logs and client errors; a URL
// marked public_url is shown whole.
func TestRedaction_ShortPathKeyHiddenPublicURLShown(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[0].URL += "/MyShortKey"
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "dead", URL: "http://127.0.0.1:1/k9?x=1"},
			engine.EndpointConfig{Name: "open", URL: "http://127.0.0.1:1/public/rpc?chain=1", PublicURL: true})
		c.Breaker.Failures = 100
	}, sim.Config{})
	h.sims[0].SetMode(sim.ModeError)
	var seen []string
	for i := 0; i < 6; i++ {
		seen = append(seen, string(h.call(i, "eth_getBalance", addr, "latest").body))
	}
	for _, path := range []string{"/v1/status", "/v1/events", "/metrics"} {
		_, b := h.adminDo("GET", path, "")
		seen = append(seen, string(b))
	}
	seen = append(seen, h.logs.String())
	all := strings.Join(seen, "\n")
	for _, s := range []string{"MyShortKey", "/k9", "x=1"} {
		if strings.Contains(all, s) {
			t.Errorf("%q leaked", s)
		}
	}
	byName := map[string]string{}
	for _, ep := range h.status().Endpoints {
		byName[ep.Name] = ep.URL
	}
	if got := byName["s0"]; !strings.HasSuffix(got, "/REDACTED") {
		t.Errorf("s0 url %q, want its path hidden", got)
	}
	if got := byName["open"]; got != "http://127.0.0.1:1/public/rpc?chain=1" {
		t.Errorf("public url shown as %q", got)
	}
}

// A provider refusing a key may quote the URL it was called at in its
// JSON-RPC error. The error reaches the client (it is the answer a direct
// client would get) without the key: in its message and in its data, for
// a single call and in a batch, the rest of the answer unchanged.
func TestRedaction_UpstreamErrorQuotingItsURLReachesTheClientWithoutTheKey(t *testing.T) {
	const key, query = "0123456789abcdefKEY", "QUERYSECRET77"
	quoting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		answer := func(id json.RawMessage) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"invalid project id in %s","data":{"url":"http://%s%s","n":12345678901234567890}}}`,
				id, r.URL.RequestURI(), r.Host, r.URL.RequestURI())
		}
		var batch []struct{ ID json.RawMessage }
		if json.Unmarshal(body, &batch) == nil {
			parts := make([]string, len(batch))
			for i, c := range batch {
				parts[i] = answer(c.ID)
			}
			io.WriteString(w, "["+strings.Join(parts, ",")+"]")
			return
		}
		var one struct{ ID json.RawMessage }
		json.Unmarshal(body, &one)
		io.WriteString(w, answer(one.ID))
	}))
	t.Cleanup(quoting.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "quoting", URL: quoting.URL + "/v3/" + key + "?apikey=" + query}}
	})
	single := h.call(41, "eth_getBalance", addr, "latest")
	batch := h.post(`[{"jsonrpc":"2.0","id":"a","method":"eth_getBalance","params":["` + addr + `","latest"]},` +
		`{"jsonrpc":"2.0","id":"b","method":"eth_getBalance","params":["` + addr + `","latest"]}]`)
	for _, r := range []reply{single, batch} {
		got := string(r.body)
		if strings.Contains(got, key) || strings.Contains(got, query) {
			t.Fatalf("the endpoint's key reached the client: %s", got)
		}
		if !json.Valid(r.body) || !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "invalid project id in /REDACTED") ||
			!strings.Contains(got, `"n":12345678901234567890`) {
			t.Fatalf("the endpoint's error lost more than its key: %s", got)
		}
	}
	if !strings.Contains(string(single.body), `"id":41`) || !strings.Contains(string(batch.body), `"id":"a"`) || !strings.Contains(string(batch.body), `"id":"b"`) {
		t.Fatalf("ids: %s / %s", single.body, batch.body)
	}
}

// An upstream may quote an endpoint URL's user name or password on their
// own, not only its user info whole: "auth failed for PASSWD789 (user
// userx) at /key/SECRETKEY999" reached the client with only the path
// scrubbed. Each is a secret on its own, in a read's and a write's error
// relayed to the client, whichever endpoint quotes them, and in the
// status, events, metrics and logs of an endpoint failing with them in its
// error.
func TestRedaction_UserNameAndPasswordQuotedOnTheirOwn(t *testing.T) {
	const user, password, key = "userx", "PASSWD789", "SECRETKEY999"
	quote := "auth failed for " + password + " (user " + user + ") at /key/" + key
	quoting := func() *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var call struct {
				ID     json.RawMessage
				Method string
			}
			body, _ := io.ReadAll(r.Body)
			json.Unmarshal(body, &call)
			if call.Method == "eth_getCode" { // the endpoint's failure, not the request's
				w.WriteHeader(http.StatusBadGateway)
				io.WriteString(w, quote)
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%q,"data":%q}}`, call.ID, quote, user+" "+password)
		}))
		t.Cleanup(s.Close)
		return s
	}
	own, other := quoting(), quoting()
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{
			{Name: "own", URL: strings.Replace(own.URL, "http://", "http://"+user+":"+password+"@", 1) + "/key/" + key},
			{Name: "other", URL: other.URL},
		}
		c.Breaker.Failures = 100
	})
	var seen []string
	for _, ep := range []string{"own", "other"} {
		off := map[string]string{"own": "other", "other": "own"}[ep]
		if code, b := h.adminDo("POST", "/v1/endpoints/"+off+"/drain", ""); code != 200 {
			t.Fatalf("drain %s: %d %s", off, code, b)
		}
		for _, r := range []reply{
			h.call(1, "eth_getBalance", addr, "latest"),
			h.call(2, "eth_sendRawTransaction", "0x02f86b"),
		} {
			if r.endpoint != ep || !strings.Contains(string(r.body), `"code":-32000`) ||
				!strings.Contains(string(r.body), "auth failed for REDACTED (user REDACTED) at /REDACTED") {
				t.Fatalf("from %s: HTTP %d %s, want its error relayed, scrubbed", r.endpoint, r.status, r.body)
			}
			seen = append(seen, string(r.body))
		}
		r := h.call(3, "eth_getCode", addr, "latest")
		if r.rpcError() == nil {
			t.Fatalf("eth_getCode: %s, want an error", r.body)
		}
		seen = append(seen, string(r.body))
		if code, b := h.adminDo("POST", "/v1/endpoints/"+off+"/undrain", ""); code != 200 {
			t.Fatalf("undrain %s: %d %s", off, code, b)
		}
	}
	for _, path := range []string{"/v1/status", "/v1/events", "/metrics"} {
		_, b := h.adminDo("GET", path, "")
		seen = append(seen, string(b))
	}
	seen = append(seen, h.logs.String())
	all := strings.Join(seen, "\n")
	for _, s := range []string{user, password, key} {
		if strings.Contains(all, s) {
			t.Errorf("%q leaked:\n%s", s, all)
		}
	}
	if !strings.Contains(all, "HTTP 502: auth failed for REDACTED (user REDACTED)") {
		t.Errorf("the endpoint's failure lost its cause:\n%.3000s", all)
	}
}

// proxy = "env" names no URL: its word is no secret. It was scrubbed from
// every text as one, an upstream's "check the environment" relayed as
// "check the <unparseable url>ironment".
func TestRedaction_ProxyFromEnvIsNoSecret(t *testing.T) {
	const msg = "check the environment of the node"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct{ ID json.RawMessage }
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &call)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%q}}`, call.ID, msg)
	}))
	t.Cleanup(up.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "up", URL: up.URL, Proxy: engine.ProxyFromEnv}}
	})
	if r := h.call(1, "eth_getBalance", addr, "latest"); !strings.Contains(string(r.body), msg) {
		t.Fatalf("HTTP %d %s, want the upstream's %q unchanged", r.status, r.body, msg)
	}
}

// Some providers name an endpoint by a subdomain that is its only
// credential (https://abc123secret.quiknode.pro/ with token auth off).
// It was shown whole in the status's url, and named by every DNS error
// relayed to a client, kept as last_error, logged and put in the
// independence warnings. Every label below the registrable domain is now
// hidden wherever the host appears; the domain still says who provides it.
func TestRedaction_KeyLikeSubdomainNeverLeaves(t *testing.T) {
	const label = "abc123secret"
	h := newHarness(t, func(c *engine.Config) {
		// .invalid never resolves: every attempt fails with Go's
		// "lookup abc123secret.quiknode.invalid …" error, whatever the
		// machine's resolver.
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "qn", URL: "http://" + label + ".quiknode.invalid:8545/TOKEN777SECRET/"})
		c.Breaker.Failures = 100 // keep it in play
	}, sim.Config{})
	h.adminDo("POST", "/v1/endpoints/s0/drain", `{}`)
	var seen []string
	for i := 0; i < 3; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		if r.rpcError() == nil {
			t.Fatalf("expected an error, got %s", r.body)
		}
		seen = append(seen, string(r.body))
	}
	h.eng.SetIndependence(map[string]engine.IndependenceInfo{"qn": {Error: "lookup " + label + ".quiknode.invalid: no such host"}}, nil,
		[]engine.Warning{{Text: "ASN of qn unknown (address unknown: " + label + ".quiknode.invalid: no such name (NXDOMAIN))", Endpoints: []string{"qn"}}})
	for _, path := range []string{"/v1/status", "/v1/events", "/metrics", "/v1/requests"} {
		_, b := h.adminDo("GET", path, "")
		seen = append(seen, string(b))
	}
	seen = append(seen, h.logs.String())
	all := strings.Join(seen, "\n")
	if i := strings.Index(all, label); i >= 0 {
		t.Fatalf("the subdomain leaked: …%s…", all[max(0, i-200):min(len(all), i+100)])
	}
	if !strings.Contains(all, "http://REDACTED.quiknode.invalid:8545/REDACTED") || !strings.Contains(all, "lookup REDACTED.quiknode.invalid") {
		t.Fatalf("the URL or the cause lost its useful parts:\n%s", all[:min(len(all), 3000)])
	}
}

// What the probes pass on from an endpoint's answers (a head probe's
// error, a health check's reason) may quote the endpoint's URL: it is
// scrubbed like a client's error before the status, events and logs show
// it. A head probe's error quoting its key was shown whole as the
// endpoint's last error in the status, `rpcdash status` and the console.
func TestRedaction_ProbeAnswersQuotingTheURLAreScrubbed(t *testing.T) {
	const key, query, user, pass = "PATHKEY4242", "QUERYKEY4343", "probeuser", "probepass77"
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[0].URL = strings.Replace(c.Endpoints[0].URL, "http://", "http://"+user+":"+pass+"@", 1) + "/v3/" + key + "?apikey=" + query
	}, sim.Config{}, sim.Config{})
	quoted := fmt.Sprintf("JSON-RPC error -32000: bad key %s at /v3/%s?apikey=%s (user %s, password %s)", key, key, query, user, pass)
	h.eng.ObserveProbeNoHead("s0", quoted)
	h.eng.Exclude("s0", engine.ExcludeUnhealthy, "getHealth: "+quoted)
	var seen []string
	for _, path := range []string{"/v1/status", "/v1/events", "/metrics"} {
		code, b := h.adminDo("GET", path, "")
		if code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		seen = append(seen, string(b))
	}
	seen = append(seen, h.logs.String())
	all := strings.Join(seen, "\n")
	for _, s := range []string{key, query, user, pass} {
		if strings.Contains(all, s) {
			t.Fatalf("secret %q leaked:\n%s", s, all)
		}
	}
	if !strings.Contains(all, "probe: no head: JSON-RPC error -32000: bad key REDACTED") || !strings.Contains(all, "excluded: getHealth: JSON-RPC error -32000") {
		t.Fatalf("the probes' texts lost more than the secrets:\n%s", all)
	}
}
