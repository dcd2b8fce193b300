package engine_test

import (
	"testing"

	"github.com/rpcdash/rpcdash/sim"
)

// A read every endpoint answers with its own JSON-RPC error says more about
// the request than about the endpoints (a block nobody has yet, a client's
// bad call): the error is relayed and no breaker hears of it, or one
// client's bad requests would open breakers across the pool and fail every
// other client's reads.
func TestBreaker_AnErrorEveryEndpointAnswersOpensNoBreaker(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	answerWith(h.sims, "eth_getBalance", sim.DefaultRPCErrorCode, sim.DefaultRPCErrorMessage)
	const calls = 10 // breaker.failures is 3
	for i := range calls {
		mustError(t, h.call(i, "eth_getBalance", addr, "latest"), sim.DefaultRPCErrorMessage)
	}
	for _, ep := range h.status().Endpoints {
		if tr := h.transitions(ep.Name); len(tr) != 0 || ep.Breaker.ConsecutiveFailures != 0 {
			t.Fatalf("%s: breaker transitions %v, %d failures in a row after %d reads every endpoint answered with the same error; want none",
				ep.Name, tr, ep.Breaker.ConsecutiveFailures, calls)
		}
	}
	mustOK(t, h.call(calls, "eth_chainId"))
}
