package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// idsOf returns the ids of a single answer or of a batch's answers.
func idsOf(t *testing.T, body []byte) []string {
	t.Helper()
	var one struct{ ID json.RawMessage }
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		var many []struct{ ID json.RawMessage }
		if err := json.Unmarshal(body, &many); err != nil {
			t.Fatalf("batch answer %s: %v", body, err)
		}
		var out []string
		for _, m := range many {
			out = append(out, string(m.ID))
		}
		return out
	}
	if err := json.Unmarshal(body, &one); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	return []string{string(one.ID)}
}

func TestAnswers_ForeignIDIsNeverRelayedAndFailsOver(t *testing.T) {
	for _, keepOpen := range []bool{true, false} {
		name := "breaker-opens"
		if keepOpen {
			name = "under-sustained-traffic" // a breaker that never opens: every foreign answer is met
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) {
				if keepOpen {
					c.Breaker.Failures = 1 << 20
				}
			}, sim.Config{}, sim.Config{}, sim.Config{})
			bad := h.sims[0]
			if err := bad.Apply(sim.ControlRequest{Mode: ptr("foreign_id")}); err != nil {
				t.Fatal(err)
			}
			// What the chain id and the balance are, from a healthy sim: an
			// answer carrying the right id must carry its own call's result
			// too (an upstream batch answered with neighbours' ids).
			results := func(body []byte) []string {
				var as []struct{ Result json.RawMessage }
				json.Unmarshal(body, &as)
				out := make([]string, len(as))
				for i, a := range as {
					out[i] = string(a.Result)
				}
				return out
			}
			resp, err := http.Post(h.sims[1].URL(), "application/json", strings.NewReader(`[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["`+addr+`","latest"]}]`))
			if err != nil {
				t.Fatal(err)
			}
			healthy, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			truth := results(healthy)
			wrong := 0
			for i := 0; i < 30; i++ {
				body := fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"eth_chainId"},{"jsonrpc":"2.0","id":"b-%d","method":"eth_getBalance","params":[%q,"latest"]},{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber"}]`, 1000+i, i, addr, 2000+i)
				r := h.post(body)
				ids := idsOf(t, r.body)
				want := []string{fmt.Sprint(1000 + i), fmt.Sprintf(`"b-%d"`, i), fmt.Sprint(2000 + i)}
				if got := results(r.body); len(got) != 3 || got[0] != truth[0] || got[1] != truth[1] {
					wrong++
					t.Errorf("batch %d: chain id and balance %v, want %v", i, got, truth)
				}
				if strings.Join(ids, ",") != strings.Join(want, ",") || bytes.Contains(r.body, []byte(`"error"`)) {
					wrong++
					t.Errorf("batch %d: answer %s", i, r.body)
				}
			}
			for i := 0; i < 100; i++ {
				r := h.call(i, "eth_getBalance", addr, "latest")
				mustOK(t, r)
				if ids := idsOf(t, r.body); ids[0] != fmt.Sprint(i) {
					wrong++
				}
			}
			if wrong > 0 {
				t.Fatalf("%d answers with a wrong id relayed", wrong)
			}
			seen := bad.Counters().Total
			tr := h.transitions("s0")
			switch {
			case keepOpen && seen < 10: // the score steers away from it after a while
				t.Fatalf("the foreign-id sim saw only %d calls: the test exercised little", seen)
			case !keepOpen && (len(tr) == 0 || tr[0] != "closed>open"):
				t.Fatalf("the endpoint answering foreign ids was not cut out: %v", tr)
			}
			t.Logf("30 batches of 3 and 100 reads: 0 wrong ids, 0 errors; the foreign-id sim answered %d calls, none relayed; transitions %v", seen, tr)
		})
	}
}

func TestAnswers_EndpointErrorFailsOverAndOpensTheBreaker(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{}, sim.Config{})
	if err := h.sims[1].Apply(sim.ControlRequest{Mode: ptr("rpc_error")}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.endpoint == "s1" {
			t.Fatalf("an answer of the erroring endpoint was relayed: %s", r.body)
		}
	}
	ep := h.endpoint("s1")
	if tr := h.transitions("s1"); len(tr) == 0 || tr[0] != "closed>open" || !strings.Contains(ep.LastError, "missing trie node") {
		t.Fatalf("transitions %v, last error %q", tr, ep.LastError)
	}
	t.Logf("100 reads, 0 errors; s1 answered 'missing trie node' %d times before its breaker opened", h.sims[1].Counters().Total)
}

// What every endpoint says is relayed as said, and opens no breaker: a
// block no endpoint has yet is the request's problem, not three endpoints'.
func TestAnswers_ErrorEveryEndpointGivesIsRelayedAndChargesNone(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{}, sim.Config{})
	code, msg := -32000, "header not found"
	for _, s := range h.sims {
		if err := s.Apply(sim.ControlRequest{Mode: ptr("rpc_error"), ErrorCode: &code, ErrorMessage: &msg}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		r := h.call(i, "eth_getBalance", addr, "0x7fffffff")
		e := r.rpcError()
		if e == nil || e["code"] != float64(-32000) || e["message"] != "header not found" || r.attempts != 3 {
			t.Fatalf("%d attempts, answer %s; want the endpoints' own error after trying all three", r.attempts, r.body)
		}
	}
	for _, ep := range h.status().Endpoints {
		if ep.Breaker.State != engine.BreakerClosed || ep.Breaker.ConsecutiveFailures != 0 {
			t.Fatalf("%s: breaker %s with %d failures in a row", ep.Name, ep.Breaker.State, ep.Breaker.ConsecutiveFailures)
		}
	}
}

// The geth test pins a real revert; this pins the sim's, through the class
// of -32603 neighbours: a revert is the request's, relayed byte for byte.
func TestAnswers_RevertPassesThroughWithTheBreakerClosed(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	for i := 0; i < 10; i++ {
		r := h.call(i, "eth_call", map[string]string{"to": addr, "data": "0xdeadbeef"}, "latest")
		e := r.rpcError()
		if e == nil || e["code"] != float64(3) || e["data"] != sim.RevertData || r.attempts != 1 {
			t.Fatalf("attempts %d, answer %s", r.attempts, r.body)
		}
	}
	for _, ep := range h.status().Endpoints {
		if ep.Breaker.State != engine.BreakerClosed || ep.Accounting.Failures != 0 {
			t.Fatalf("%s: breaker %s, %d failures after reverts", ep.Name, ep.Breaker.State, ep.Accounting.Failures)
		}
	}
}

// An endpoint behind a misconfigured proxy: redirects and 400s whose bodies
// are well-formed JSON-RPC results. None is relayed.
func TestAnswers_Non2xxIsNeverRelayedAsASuccess(t *testing.T) {
	var status = []int{http.StatusFound, http.StatusBadRequest}
	n := 0
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ ID json.RawMessage }
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Location", "http://127.0.0.1:1/")
		w.WriteHeader(status[n%2])
		n++
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0xbad"}`, req.ID)
	}))
	t.Cleanup(proxy.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = append([]engine.EndpointConfig{{Name: "proxy", URL: proxy.URL, Provider: "px", Region: "px"}}, c.Endpoints...)
	}, sim.Config{Latency: fixed(5 * time.Millisecond)})
	for i := 0; i < 30; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if bytes.Contains(r.body, []byte("0xbad")) {
			t.Fatalf("relayed the %d answer as a success: %s", status[i%2], r.body)
		}
	}
	if !strings.HasPrefix(h.endpoint("proxy").LastError, "HTTP ") {
		t.Fatalf("proxy's last error %q", h.endpoint("proxy").LastError)
	}
}

// A provider that refuses a request with a non-2xx status often says why
// in a JSON-RPC error body (Infura's 403 "rejected due to project ID
// settings", a 429's "daily request count exceeded"). A client talking to
// it directly reads those words; through rpcdash the error said "HTTP 403".
// Now the cause carries them, scrubbed of the URL's key like every
// upstream text.
func TestAnswers_FailedStatusCarriesTheProvidersWords(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		status int
		msg    string
	}{
		{403, "rejected due to project ID settings for " + key},
		{429, "daily request count exceeded, request rate limited"},
		{503, "upstream node unavailable"},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			h, _ := onlyUpstream(t, "/v3/"+key, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":%q}}`, tc.msg)
			})
			r := h.call(1, "eth_getBalance", addr, "latest")
			e := r.rpcError()
			if e == nil {
				t.Fatalf("HTTP %d relayed as an answer: %s", tc.status, r.body)
			}
			msg := e["message"].(string)
			t.Logf("HTTP %d from the provider; the client reads: %s", tc.status, msg)
			words := strings.ReplaceAll(tc.msg, key, "")
			if !strings.Contains(msg, fmt.Sprintf("HTTP %d", tc.status)) || !strings.Contains(msg, words) {
				t.Fatalf("error %q: want the status and the provider's words %q", msg, words)
			}
			if strings.Contains(string(r.body), key) || strings.Contains(h.endpoint("only").LastError, key) {
				t.Fatalf("the URL's key reached the client or the status: %s / %s", r.body, h.endpoint("only").LastError)
			}
		})
	}
}

// A provider that refuses a request often says why in a body that is not
// JSON-RPC: Infura's 401 "invalid project id" in plain text, a JSON object
// of its own, a CDN's HTML error page. The client, who would have read it
// talking to the provider directly, got "HTTP 401"; now the cause carries
// the words: scrubbed of the URL's key, cut, never the page itself.
func TestAnswers_FailedStatusNamesWhatItsBodySays(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		want                    string
	}{
		{"text", "text/plain", "invalid project id " + key + "\nsee docs\n", 401, "HTTP 401: invalid project id REDACTED"},
		{"json error", "application/json", `{"error":"invalid API key"}`, 401, "HTTP 401: invalid API key"},
		{"json message", "application/json", `{"code":403,"message":"IP not allowed"}`, 403, "HTTP 403: IP not allowed"},
		{"json nested", "application/json", `{"error":{"code":"forbidden","message":"plan does not include archive data"}}`, 403, "HTTP 403: plan does not include archive data"},
		{"html", "text/html", "<html><head><title>502 Bad\n  Gateway</title></head><body>" + strings.Repeat("<p>x</p>", 5000) + "</body></html>", 502, "HTTP 502: HTML page: 502 Bad Gateway"},
		{"html untitled", "text/html", "<!DOCTYPE html><html><body>oops</body></html>", 503, "HTTP 503: an HTML page"},
		{"terminal escapes", "text/plain", "bad\x1b[2Jrequest", 400, "HTTP 400: bad?[2Jrequest"},
		{"long", "text/plain", strings.Repeat("a", 5000), 500, "HTTP 500: " + strings.Repeat("a", 200)},
		{"empty", "text/plain", "", 401, "HTTP 401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := onlyUpstream(t, "/v3/"+key, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			r := h.call(1, "eth_getBalance", addr, "latest")
			e := r.rpcError()
			if e == nil {
				t.Fatalf("HTTP %d relayed as an answer: %s", tc.status, r.body)
			}
			msg := e["message"].(string)
			t.Logf("the client reads: %s", msg)
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q: want %q", msg, tc.want)
			}
			if len(msg) > 600 || strings.Contains(msg, "<p>") || strings.Contains(msg, "see docs") {
				t.Fatalf("error carries more than the body's words (%d bytes): %q", len(msg), msg)
			}
			if last := h.endpoint("only").LastError; strings.Contains(string(r.body), key) || strings.Contains(last, key) || !strings.Contains(last, tc.want) {
				t.Fatalf("last error %q (want %q, without the key); body %s", last, tc.want, r.body)
			}
		})
	}
}

// A redirect (a provider moved, or http:// to https://) is named with where
// it points, scheme and host only: "HTTP 308" alone left the operator to
// guess. It is not followed: the key would go wherever it says.
func TestAnswers_RedirectNamesWhereItPoints(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	var followed atomic.Bool
	h, upURL := onlyUpstream(t, "/v3/"+key, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v4/") {
			followed.Store(true)
		}
		w.Header().Set("Location", "/v4/"+key)
		w.WriteHeader(http.StatusPermanentRedirect)
	})
	r := h.call(1, "eth_getBalance", addr, "latest")
	e := r.rpcError()
	if e == nil {
		t.Fatalf("redirect relayed as an answer: %s", r.body)
	}
	msg := e["message"].(string)
	if want := "HTTP 308 redirect to " + upURL + "/REDACTED: redirects are not followed"; !strings.Contains(msg, want) {
		t.Fatalf("error %q: want %q", msg, want)
	}
	if strings.Contains(string(r.body), key) || strings.Contains(h.endpoint("only").LastError, key) || followed.Load() {
		t.Fatalf("the key reached the client or the status, or the redirect was followed: %s", r.body)
	}
}

// onlyUpstream starts an engine whose one endpoint, "only", is handler on
// loopback at path; it returns the harness and the upstream's base URL.
func onlyUpstream(t *testing.T, path string, handler http.HandlerFunc) (*harness, string) {
	t.Helper()
	up := httptest.NewServer(handler)
	t.Cleanup(up.Close)
	return startHarness(t, nil, func(c *engine.Config) {
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "only", URL: up.URL + path})
	}), up.URL
}

// Some providers and nodes answer without the "jsonrpc" member
// ({"id":1,"result":"0x1"}). viem and ethers take such an answer, so a
// client talking to the endpoint directly is served; rpcdash took it for
// "answer is not JSON-RPC", the endpoint's failure: reads failed over and
// charged the breaker, a write the node had carried out was answered an
// error, and with every endpoint like that every request failed. Now an
// answer with no "jsonrpc" member is judged as any other (its id, its
// result or error object) and relayed as it came; one that says another
// version ("jsonrpc":"1.0") is still not JSON-RPC 2.0.
func TestAnswers_WithoutTheVersionMemberAreTheEndpointsAnswers(t *testing.T) {
	var upstream atomic.Int64
	type call struct {
		ID     json.RawMessage
		Method string
	}
	answer := func(req call) string {
		switch req.Method {
		case "eth_call":
			return fmt.Sprintf(`{"id":%s,"error":{"code":3,"message":"execution reverted","data":"0x08c3"}}`, req.ID)
		case "eth_sendRawTransaction":
			return fmt.Sprintf(`{"id":%s,"result":"0x%064x"}`, req.ID, 7)
		}
		return fmt.Sprintf(`{"id":%s,"result":"0x1"}`, req.ID)
	}
	bare := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		upstream.Add(1)
		w.Header().Set("Content-Type", "application/json")
		var batch []call
		if json.Unmarshal(body, &batch) == nil { // an upstream batch: each answer bare too
			parts := make([]string, len(batch))
			for i, req := range batch {
				parts[i] = answer(req)
			}
			fmt.Fprintf(w, "[%s]", strings.Join(parts, ","))
			return
		}
		var req call
		json.Unmarshal(body, &req)
		fmt.Fprint(w, answer(req))
	}
	// Two such endpoints: a failover, if any, would reach the other.
	a, b := httptest.NewServer(http.HandlerFunc(bare)), httptest.NewServer(http.HandlerFunc(bare))
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	h := startHarness(t, nil, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: a.URL, Provider: "pa", Region: "ra"},
			{Name: "b", URL: b.URL, Provider: "pb", Region: "rb"}}
	})
	requests := 0
	for i := 0; i < 10; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		requests++
		if want := fmt.Sprintf(`{"id":%d,"result":"0x1"}`, i); r.status != 200 || string(r.body) != want || r.attempts != 1 {
			t.Fatalf("read %d: HTTP %d after %d attempts: %s; want %s relayed as it came", i, r.status, r.attempts, r.body, want)
		}
		r = h.call(100+i, "eth_blockNumber")
		requests++
		mustOK(t, r)
		if r.attempts != 1 {
			t.Fatalf("eth_blockNumber %d: %d attempts: %s", i, r.attempts, r.body)
		}
	}
	r := h.call(200, "eth_call", map[string]string{"to": addr, "data": "0xdeadbeef"}, "latest")
	requests++
	if e := r.rpcError(); e == nil || e["code"] != float64(3) || r.attempts != 1 {
		t.Fatalf("revert: %d attempts, %s; want the revert relayed from the first endpoint", r.attempts, r.body)
	}
	r = h.call(300, "eth_sendRawTransaction", "0x01")
	requests++
	if want := fmt.Sprintf(`{"id":300,"result":"0x%064x"}`, 7); string(r.body) != want || r.attempts != 1 {
		t.Fatalf("write: %d attempts, %s; want the hash the node answered", r.attempts, r.body)
	}
	r = h.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["` + addr + `","latest"]}]`)
	requests++ // one upstream batch
	if ids := idsOf(t, r.body); strings.Join(ids, ",") != "1,2" || bytes.Contains(r.body, []byte(`"error"`)) {
		t.Fatalf("batch: %s; want both answered", r.body)
	}
	for _, name := range []string{"a", "b"} {
		p, err := h.eng.Probe(ctxT(t, 5*time.Second), name, "eth_blockNumber", nil)
		requests++
		if err != nil || !p.OK {
			t.Fatalf("probe of %s: %v %s", name, err, p.Err)
		}
	}
	if n := upstream.Load(); n != int64(requests) {
		t.Fatalf("%d upstream requests for %d requests and probes: some were failed over", n, requests)
	}
	for _, ep := range h.status().Endpoints {
		if ep.Breaker.State != engine.BreakerClosed || ep.Accounting.Failures != 0 || ep.LastError != "" {
			t.Fatalf("%s: breaker %s, %d failures, last error %q", ep.Name, ep.Breaker.State, ep.Accounting.Failures, ep.LastError)
		}
	}
}

// An answer that names another version than 2.0 is not JSON-RPC 2.0: the
// endpoint's failure, failed over as before.
func TestAnswers_AnotherVersionIsStillTheEndpointsFailure(t *testing.T) {
	var seen atomic.Int64
	v1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ ID json.RawMessage }
		json.NewDecoder(r.Body).Decode(&req)
		seen.Add(1)
		fmt.Fprintf(w, `{"jsonrpc":"1.0","id":%s,"result":"0xbad"}`, req.ID)
	}))
	t.Cleanup(v1.Close)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = append([]engine.EndpointConfig{{Name: "v1", URL: v1.URL, Provider: "pv", Region: "rv"}}, c.Endpoints...)
	}, sim.Config{Latency: fixed(5 * time.Millisecond)})
	for i := 0; i < 20; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.endpoint != "s0" || bytes.Contains(r.body, []byte("0xbad")) {
			t.Fatalf("read %d answered by %s: %s", i, r.endpoint, r.body)
		}
	}
	if last := h.endpoint("v1").LastError; seen.Load() == 0 || !strings.Contains(last, "not JSON-RPC") {
		t.Fatalf("v1 asked %d times, last error %q; want its answers judged not JSON-RPC", seen.Load(), last)
	}
}
