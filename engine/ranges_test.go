package engine_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
)

func hexBlock(n int64) string { return "0x" + strconv.FormatInt(n, 16) }

// answerWith makes the sims answer calls of method with a JSON-RPC error,
// as a node does.
func answerWith(sims []*sim.Upstream, method string, code int, message string) {
	for _, u := range sims {
		u.SetRPCError(code, message)
		u.SetRPCErrorMethods([]string{method})
		u.SetMode(sim.ModeRPCError)
	}
}

// mustError fails unless the reply is the JSON-RPC error with this message.
func mustError(t testing.TB, r reply, message string) {
	t.Helper()
	if e := r.rpcError(); r.status != 200 || e == nil || e["message"] != message {
		t.Fatalf("want the error %q, got HTTP %d %s", message, r.status, r.body)
	}
}

// geth's answer to a range whose fromBlock is above its toBlock is the
// request's own error: relayed from the first endpoint, and no endpoint is
// ranked as unable to serve eth_getLogs for it.
func TestRanges_MalformedRangeIsTheRequests(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	const msg = "invalid block range params"
	answerWith(r.sims, "eth_getLogs", -32602, msg)
	top := r.status().MaxHead
	before := r.upstreamCount("eth_getLogs")
	const calls = 10
	for i := range calls {
		rep := r.call(i, "eth_getLogs", map[string]any{"fromBlock": hexBlock(top - 1), "toBlock": hexBlock(top - 5)})
		mustError(t, rep, msg)
	}
	n := r.upstreamCount("eth_getLogs") - before
	var ranked []string
	for _, ep := range r.status().Endpoints {
		if !ep.Methods["eth_getLogs"].CannotServeUntil.IsZero() {
			ranked = append(ranked, ep.Name)
		}
	}
	t.Logf("%d malformed ranges: %d upstream requests; ranked unable to serve eth_getLogs: %v", calls, n, ranked)
	if n != calls || len(ranked) > 0 {
		t.Fatalf("%d malformed ranges cost %d upstream requests (want %d); ranked unable to serve eth_getLogs: %s", calls, n, calls, strings.Join(ranked, ", "))
	}
}
