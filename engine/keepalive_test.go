package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

var callParams = []any{map[string]any{"to": "0x0000000000000000000000000000000000000001", "data": "0x"}, "latest"}

// An upstream closing a reused keep-alive connection as a request went out
// on it, before a byte of answer: a read (and an upstream batch of reads)
// goes out again on a fresh connection, unseen by the client and not
// charged to the endpoint; a write, which the upstream may have read, is
// not sent again. (A pool of 1 against a Go server with IdleTimeout 50 ms,
// requests 50 ms apart: 11 of 200 eth_call failed -32603 with EOF, none
// sent directly.)
func TestKeepAlive_ReusedConnectionCutBeforeAnyAnswer(t *testing.T) {
	u := newIdleCutUpstream(t, 0)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "u", URL: u.URL()}}
	})
	mustOK(t, h.call(1, "eth_call", callParams...)) // a connection to reuse

	u.cutNext("eth_call")
	r := h.call(2, "eth_call", callParams...)
	mustOK(t, r)
	if received, answered, cut := u.counts("eth_call"); cut != 1 || answered != 2 || received != 3 {
		t.Fatalf("eth_call: upstream received %d, answered %d, cut %d; want the cut one sent again once", received, answered, cut)
	}
	if r.attempts != 1 {
		t.Fatalf("%d attempts: the transport's resend is no attempt of its own", r.attempts)
	}

	u.cutNext("batch")
	b := h.post(`[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + addr + `","latest"]},` +
		`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["` + addr + `","latest"]}]`)
	if got := strings.Count(string(b.body), `"result":"0x1"`); got != 2 {
		t.Fatalf("batch answered %s", b.body)
	}
	if received, answered, cut := u.counts("batch"); cut != 1 || answered != 1 || received != 2 {
		t.Fatalf("batch: upstream received %d, answered %d, cut %d; want the cut batch sent again once", received, answered, cut)
	}
	if received, _, _ := u.counts("eth_getBalance"); received != 0 {
		t.Fatalf("the batch's calls went out alone too (%d)", received)
	}

	if keys := u.keyHeadersSeen(); keys != 0 {
		t.Fatalf("%d requests carried an idempotency key on the wire", keys)
	}
	if ep := h.endpoint("u"); ep.Rates.Failures != 0 || ep.LastError != "" {
		t.Fatalf("reads answered after a resend were charged: %d failures, last error %q", ep.Rates.Failures, ep.LastError)
	}

	u.cutNext("eth_sendRawTransaction")
	w := h.call(3, "eth_sendRawTransaction", "0x01")
	if e := w.rpcError(); e == nil || !strings.Contains(e["message"].(string), "EOF") {
		t.Fatalf("write cut after it went out: HTTP %d %s; want the connection's failure relayed", w.status, w.body)
	}
	if received, answered, cut := u.counts("eth_sendRawTransaction"); received != 1 || answered != 0 || cut != 1 {
		t.Fatalf("write: upstream received %d, answered %d, cut %d; want it sent exactly once", received, answered, cut)
	}
}

// A write after a few seconds without traffic goes on a fresh connection,
// not on one a server with a keep-alive timeout of about 5 s (Node's
// default) is closing as idle: the upstream here cuts any request on a
// connection idle 4.5 s or longer. Kept 90 s, the connection was reused
// and the write failed as "may have carried it out".
func TestKeepAlive_WriteAfterIdleGoesOnAFreshConnection(t *testing.T) {
	t.Parallel()
	u := newIdleCutUpstream(t, 4500*time.Millisecond)
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints = []engine.EndpointConfig{{Name: "u", URL: u.URL()}}
	})
	mustOK(t, h.call(1, "eth_sendRawTransaction", "0x01"))
	time.Sleep(5 * time.Second) // the idleness under test
	mustOK(t, h.call(2, "eth_sendRawTransaction", "0x02"))
	if received, answered, cut := u.counts("eth_sendRawTransaction"); received != 2 || answered != 2 || cut != 0 {
		t.Fatalf("upstream received %d, answered %d, cut %d", received, answered, cut)
	}
}
