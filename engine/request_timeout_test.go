package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A trace or a wide log query takes seconds at a node that answers its other
// reads in milliseconds; a client talking to the node directly gets the
// answer, so server.request_timeout must not fail it.
func TestRequestTimeout_LongReadsOutliveTheGeneralDeadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) { c.Server.RequestTimeout = 400 * time.Millisecond },
		sim.Config{Latency: fixed(5 * time.Millisecond)})
	h.sims[0].SetMethodLatency("eth_getLogs", 700*time.Millisecond)
	h.sims[0].SetMethodLatency("eth_call", 700*time.Millisecond)

	r := h.call(1, "eth_getLogs", logsFilter)
	mustOK(t, r)
	if r.took < 700*time.Millisecond || r.attempts != 1 {
		t.Fatalf("eth_getLogs: %d attempts in %s; want the one attempt's answer after 700 ms", r.attempts, r.took)
	}
	r = h.call(2, "eth_call", map[string]any{"to": addr}, "latest")
	if e := r.rpcError(); e == nil || !strings.Contains(e["message"].(string), "no answer within server.request_timeout 400ms") {
		t.Fatalf("eth_call past server.request_timeout: got HTTP %d %s, want the request timeout naming its key", r.status, r.body)
	}

	// In a batch each call keeps its own method's deadline.
	r = h.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"` + addr + `"},"latest"]},` +
		`{"jsonrpc":"2.0","id":2,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x2"}]}]`)
	var answers []struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &answers); err != nil || len(answers) != 2 {
		t.Fatalf("batch: HTTP %d %s", r.status, r.body)
	}
	if answers[0].Error == nil || !strings.Contains(answers[0].Error.Message, "server.request_timeout 400ms") {
		t.Fatalf("batch's eth_call: %s, want the request timeout", r.body)
	}
	if answers[1].Error != nil || answers[1].Result == nil {
		t.Fatalf("batch's eth_getLogs: %s, want its answer", r.body)
	}
	st := h.status()
	if logs, call := st.Methods["eth_getLogs"].RequestTimeout, st.Methods["eth_call"].RequestTimeout; logs != time.Minute || call != 400*time.Millisecond {
		t.Fatalf("status request deadlines: eth_getLogs %s, eth_call %s; want 1m0s and 400ms", logs, call)
	}
}

// Solana's account scans and an epoch's rewards take seconds too: a node
// answered getSupply after 12 s to a direct client; through rpcdash it
// failed at the general 10 s. The
// endpoint answers those (which the sim does not serve) 700 ms late and
// passes the rest to a sim.
func TestRequestTimeout_SolanasLongReadsOutliveTheGeneralDeadline(t *testing.T) {
	t.Parallel()
	long := []string{"getInflationReward", "getSupply", "getTokenLargestAccounts"}
	sims := newHarness(t, func(c *engine.Config) { c.Chain.Kind = "solana" },
		sim.Config{Chain: sim.ChainSolana, Latency: fixed(5 * time.Millisecond)}).sims
	sims[0].SetMethodLatency("getBalance", 700*time.Millisecond)
	front := simFront(t, sims[0], func(w http.ResponseWriter, body []byte) bool {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &req) != nil || !slices.Contains(long, req.Method) {
			return false
		}
		time.Sleep(700 * time.Millisecond)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"context":{"slot":1},"value":[]}}`, req.ID)
		return true
	})
	h := newHarness(t, func(c *engine.Config) {
		c.Chain.Kind = "solana"
		c.Server.RequestTimeout = 400 * time.Millisecond
		c.Endpoints[0].URL = front
	}, sim.Config{Chain: sim.ChainSolana})
	for i, m := range long {
		r := h.call(i, m, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
		if r.status != http.StatusOK || r.rpcError() != nil || r.took < 700*time.Millisecond {
			t.Fatalf("%s: HTTP %d in %s: %s; want its answer after 700 ms", m, r.status, r.took, r.body)
		}
	}
	r := h.call(9, "getBalance", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
	if e := r.rpcError(); e == nil || !strings.Contains(e["message"].(string), "server.request_timeout 400ms") {
		t.Fatalf("getBalance past server.request_timeout: got HTTP %d %s, want the request timeout", r.status, r.body)
	}
	if d := h.status().Methods["getSupply"].RequestTimeout; d != time.Minute {
		t.Fatalf("status request deadline of getSupply: %s, want 1m0s", d)
	}
}

func TestRequestTimeout_MethodsTimeoutsSetsAMethodsOwn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) {
		c.Server.RequestTimeout = 400 * time.Millisecond
		c.Methods.Timeouts = map[string]time.Duration{"eth_call": 2 * time.Second, "eth_getlogs": 300 * time.Millisecond, "acme_submit": 300 * time.Millisecond}
	}, sim.Config{Latency: fixed(5 * time.Millisecond)})
	h.sims[0].SetMethodLatency("eth_getLogs", 700*time.Millisecond)
	h.sims[0].SetMethodLatency("acme_submit", 700*time.Millisecond)
	h.sims[0].SetMethodLatency("eth_call", 700*time.Millisecond)

	mustOK(t, h.call(1, "eth_call", map[string]any{"to": addr}, "latest"))
	r := h.call(2, "eth_getLogs", logsFilter)
	if e := r.rpcError(); e == nil || !strings.Contains(e["message"].(string), "no answer within methods.timeouts.eth_getlogs 300ms") {
		t.Fatalf("eth_getLogs past its methods.timeouts: got HTTP %d %s", r.status, r.body)
	}
	if r.took > 650*time.Millisecond {
		t.Fatalf("eth_getLogs answered after %s: its 300 ms deadline did not end it", r.took)
	}
	// A method in no table is counted as "other" until it has answered, but
	// its error names its own deadline.
	r = h.call(3, "acme_submit", "0x01")
	if e := r.rpcError(); e == nil || !strings.Contains(e["message"].(string), "no answer within methods.timeouts.acme_submit 300ms") {
		t.Fatalf("acme_submit past its methods.timeouts: got HTTP %d %s", r.status, r.body)
	}
}

// A method that takes seconds at every endpoint, while their other reads
// take milliseconds, is not a hang: before, each attempt of it passed the
// deadline of the endpoint's quick reads until the endpoint had answered it
// five times, so each call was raced on the other endpoint (twice the cost
// of the dearest calls) and charged to a breaker as a hang.
func TestDeadline_ASlowMethodIsJudgedByItsOwnFewAnswers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(2 * time.Millisecond)})
	warm(t, h)
	for _, s := range h.sims {
		s.SetMethodLatency("eth_call", 600*time.Millisecond)
	}
	raced := 0
	for i := range 10 {
		// As in an indexer's traffic, the slow method stays well under 1 %
		// of each endpoint's answers: their p99 stays the quick reads'.
		for j := range 100 {
			mustOK(t, h.call(j, "eth_getBalance", addr, "latest"))
		}
		r := h.call(i, "eth_call", map[string]any{"to": addr}, "latest")
		mustOK(t, r)
		if r.attempts > 1 {
			raced++
		}
	}
	// The first call has nothing but the quick reads to go by.
	if raced > 1 {
		t.Fatalf("%d of 10 eth_call raced past a deadline; want at most the first", raced)
	}
	overdue := int64(0)
	for _, ep := range h.status().Endpoints {
		m := ep.Methods["eth_call"]
		overdue += m.Overdue
		if ep.Breaker.ConsecutiveFailures != 0 {
			t.Fatalf("%s: %d failures in a row", ep.Name, ep.Breaker.ConsecutiveFailures)
		}
		if src := m.AttemptTimeoutSource; src != "few" && src != "learned" {
			t.Fatalf("%s: eth_call's deadline %s comes from %q; want its answers", ep.Name, m.AttemptTimeout, src)
		}
	}
	if overdue > 2 {
		t.Fatalf("%d eth_call attempts overdue; want at most the first call's", overdue)
	}
	t.Logf("eth_call: %d of 10 raced, %d attempts overdue", raced, overdue)
}

// A long read's own 60 s deadline is the request's, not the attempt's: on
// an endpoint that hangs before anyone has answered the method, the
// attempt is raced at the endpoint's deadline, as any read's.
func TestDeadline_ALongReadOnAHungEndpointIsRacedAtTheEndpointsDeadline(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	warm(t, h)
	h.sims[0].SetMode(sim.ModeHang)
	r := h.call(1, "eth_getLogs", logsFilter)
	mustOK(t, r)
	if r.endpoint != "s1" || r.took > 2*time.Second {
		t.Fatalf("answered by %s after %s (%d attempts); want s1 within the hung s0's deadline", r.endpoint, r.took, r.attempts)
	}
	t.Logf("answered by %s after %s, %d attempts", r.endpoint, r.took.Round(time.Millisecond), r.attempts)
}

// eth_sendRawTransactionSync answers once the transaction is in a block: on
// L1 a direct client has its receipt after 12 s or so, where the general
// 10 s deadline cut it with an error saying the endpoint may have carried
// it out. It has a built-in deadline of its own.
func TestRequestTimeout_AWriteWaitingForItsReceiptOutlivesTheGeneralDeadline(t *testing.T) {
	t.Parallel()
	const general = 300 * time.Millisecond
	var received atomic.Int32
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.NewDecoder(r.Body).Decode(&call) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		result := `"0x1"`
		if call.Method == "eth_sendRawTransactionSync" {
			received.Add(1)
			select { // included in a block three general deadlines later
			case <-time.After(3 * general):
			case <-r.Context().Done():
				return
			}
			result = `{"transactionHash":"0x` + strings.Repeat("ab", 32) + `","status":"0x1"}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(call.ID) + `,"result":` + result + `}`))
	}))
	defer node.Close()
	h := newHarness(t, func(c *engine.Config) {
		c.Server.RequestTimeout = general
		c.Endpoints = []engine.EndpointConfig{{Name: "node", URL: node.URL}}
	})
	r := h.call(1, "eth_sendRawTransactionSync", "0xf86b80")
	mustOK(t, r)
	if !strings.Contains(string(r.body), `"transactionHash"`) || r.took < 3*general || received.Load() != 1 {
		t.Fatalf("after %s, the node asked %d times: %s; want the receipt from one send", r.took, received.Load(), r.body)
	}
	if d := h.status().Methods["eth_sendRawTransactionSync"].RequestTimeout; d != time.Minute {
		t.Fatalf("status: eth_sendRawTransactionSync's request deadline %s, want 1m0s", d)
	}
	if ep := h.endpoint("node"); ep.Rates.Failures != 0 || ep.Breaker.ConsecutiveFailures != 0 {
		t.Fatalf("the receipt's wait was charged to the node: %d failures, %d in a row", ep.Rates.Failures, ep.Breaker.ConsecutiveFailures)
	}
}
