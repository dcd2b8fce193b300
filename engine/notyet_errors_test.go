package engine_test

import (
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// failuresCounted sums what the endpoints' breakers and failure rates
// heard: failures in the rolling window and breakers not closed.
func (h *harness) failuresCounted() (failures int64, opened []string) {
	for _, ep := range h.status().Endpoints {
		failures += ep.Rates.Failures
		if ep.Breaker.State != engine.BreakerClosed {
			opened = append(opened, ep.Name)
		}
	}
	return failures, opened
}

// An indexer polls a block beyond the pool head with a read naming it, and
// every node answers as geth does for a block it does not have yet. Two
// blocks on, the block exists nowhere yet: the error is the request's,
// relayed from the first endpoint as a direct client gets it (one upstream
// request per poll), and nothing is counted against anyone. The block
// right after the pool head may exist on an endpoint the probes have not
// caught up with: one more endpoint is asked, no more (two upstream
// requests per poll of three endpoints).
func TestNotYet_ErrorForABlockBeyondThePoolHeadIsRelayedFromTheFirstEndpoint(t *testing.T) {
	for _, tc := range []struct {
		method  string
		code    int
		message string
		params  func(block int64) []any
	}{
		{"eth_call", -32000, "header not found", func(b int64) []any {
			return []any{map[string]any{"to": addr, "data": "0x70a08231"}, hexBlock(b)}
		}},
		{"eth_getBlockReceipts", -32000, "unknown block", func(b int64) []any { return []any{hexBlock(b)} }},
		{"eth_getLogs", -32602, "block range extends beyond current head block", func(b int64) []any {
			return []any{map[string]any{"fromBlock": hexBlock(b - 3), "toBlock": hexBlock(b)}}
		}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			r := newHeadRig(t, 3, nil)
			r.warmUp()
			answerWith(r.sims, tc.method, tc.code, tc.message)
			top := r.status().MaxHead
			const polls = 10
			for _, poll := range []struct {
				ahead    int64
				attempts int
			}{{2, 1}, {1, 2}} {
				ahead, attempts := poll.ahead, poll.attempts
				before := r.upstreamCount(tc.method)
				for i := range polls {
					rep := r.call(i, tc.method, tc.params(top+ahead)...)
					mustError(t, rep, tc.message)
					if rep.attempts != attempts {
						t.Errorf("poll %d of block %d (pool head %d): %d attempts, want %d", i, top+ahead, top, rep.attempts, attempts)
					}
				}
				n := r.upstreamCount(tc.method) - before
				failures, opened := r.failuresCounted()
				t.Logf("%d polls of block pool head + %d: %d upstream requests, %d failures counted, breakers not closed: %v", polls, ahead, n, failures, opened)
				if n != int64(polls*attempts) || failures != 0 || len(opened) > 0 {
					t.Fatalf("%d polls of pool head + %d cost %d upstream requests (want %d); %d failures counted, breakers not closed %v (want none)", polls, ahead, n, polls*attempts, failures, opened)
				}
			}
			for _, ep := range r.status().Endpoints {
				if until := ep.Methods[tc.method].CannotServeUntil; !until.IsZero() {
					t.Fatalf("%s is ranked as unable to serve %s until %s", ep.Name, tc.method, until)
				}
			}
		})
	}
}

// The endpoint that has made the next block answers it; the others do not
// have it yet. Polling that block never opens a breaker, and costs at most
// one more upstream request per poll: the slower endpoint's "header not
// found" is set aside while one more endpoint is asked.
func TestNotYet_PollingTheNextBlockNeverOpensBreakers(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	answerWith(r.sims[1:], "eth_call", -32000, "header not found")
	next := hexBlock(r.status().MaxHead + 1)
	const polls = 30
	before := r.upstreamCount("eth_call")
	for i := range polls {
		rep := r.call(i, "eth_call", map[string]any{"to": addr, "data": "0x70a08231"}, next)
		if rep.endpoint != "s0" {
			mustError(t, rep, "header not found")
		}
	}
	n := r.upstreamCount("eth_call") - before
	_, opened := r.failuresCounted()
	t.Logf("%d polls of the next block: %d upstream requests, breakers not closed: %v", polls, n, opened)
	if len(opened) > 0 || n > 2*polls {
		t.Fatalf("%d polls of the next block cost %d upstream requests (want at most %d) and left breakers not closed: %v", polls, n, 2*polls, opened)
	}
}

// A block the pool has, near the tip: the endpoint answering "header not
// found" for it is behind (a provider's backend a block or two late), not
// broken. The read fails over and is answered; the error counts as lag, not
// as a failure of the endpoint.
func TestNotYet_ErrorForATipBlockThePoolHasFailsOverAsLag(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	rep, s1 := r.s1MissesBlock(r.status().MaxHead - 1)
	t.Logf("s1's header not found for pool head - 1: answered by %s after 2 attempts; s1 failures %d, breaker failures in a row %d", rep.endpoint, s1.Rates.Failures, s1.Breaker.ConsecutiveFailures)
	if s1.Rates.Failures != 0 || s1.Breaker.ConsecutiveFailures != 0 {
		t.Fatalf("s1's lag was counted as its failure: %d failures, %d in a row", s1.Rates.Failures, s1.Breaker.ConsecutiveFailures)
	}
}

// An old block the endpoint's head says it has: "header not found" is the
// endpoint's fault (pruned, broken), as before: it fails over and counts.
func TestNotYet_ErrorForAnOldBlockIsTheEndpoints(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	_, s1 := r.s1MissesBlock(r.status().MaxHead - 3*r.lag)
	if s1.Rates.Failures != 1 || s1.Breaker.ConsecutiveFailures != 1 {
		t.Fatalf("s1's missing old block was not counted: %d failures, %d in a row", s1.Rates.Failures, s1.Breaker.ConsecutiveFailures)
	}
}

// The same on Solana: a slot beyond every head (past the one after the
// pool head), asked for by slot or as a read's minContextSlot, is the
// request's (relayed from the first endpoint); a slot the pool has fails
// over as the endpoint's lag. A
// minContextSlot is a slot the client read in an answer, which the pool
// head may trail by a slot or two: it is beyond every head only past
// chain.max_head_lag above the pool head.
func TestNotYet_SolanaSlotBeyondThePoolHeadIsTheRequests(t *testing.T) {
	for _, tc := range []struct {
		method  string
		code    int
		message string
		params  func(slot int64) []any
		slack   bool // beyond the pool head means beyond it + chain.max_head_lag
	}{
		{"getBlock", -32004, "Block not available for slot", func(s int64) []any { return []any{s} }, false},
		{"getBlockTime", -32014, "Block status not yet available for slot", func(s int64) []any { return []any{s} }, false},
		{"getBalance", -32016, "Minimum context slot has not been reached", func(s int64) []any {
			return []any{"11111111111111111111111111111111", map[string]any{"minContextSlot": s}}
		}, true},
	} {
		t.Run(tc.method, func(t *testing.T) {
			r := newChainHeadRig(t, 3, sim.ChainSolana, nil)
			r.warmUp()
			answerWith(r.sims, tc.method, tc.code, tc.message)
			top := r.status().MaxHead
			beyond := top + 2 // the slot after the pool head may exist: one more endpoint is asked
			if tc.slack {
				beyond = top + 1 + r.lag
			}
			before := r.upstreamCount(tc.method)
			const polls = 10
			for i := range polls {
				mustError(t, r.call(i, tc.method, tc.params(beyond)...), tc.message)
			}
			n := r.upstreamCount(tc.method) - before
			failures, opened := r.failuresCounted()
			t.Logf("%d polls of slot pool head + %d: %d upstream requests, %d failures counted", polls, beyond-top, n, failures)
			if n != polls || failures != 0 || len(opened) > 0 {
				t.Fatalf("%d polls cost %d upstream requests (want %d); %d failures counted, breakers not closed %v", polls, n, polls, failures, opened)
			}

			// A slot the pool has: every endpoint is asked, none charged.
			before = r.upstreamCount(tc.method)
			rep := r.call(polls, tc.method, tc.params(top-1)...)
			mustError(t, rep, tc.message)
			if n := r.upstreamCount(tc.method) - before; n != 3 || rep.attempts != 3 {
				t.Fatalf("slot pool head - 1: %d upstream requests, %d attempts; want every endpoint asked", n, rep.attempts)
			}
		})
	}
}

// s1MissesBlock has s1 answer "header not found" to eth_call, reads the
// block until s1 was asked, checks that another endpoint answered in 2
// attempts, and returns that reply and s1 after it.
func (r *headRig) s1MissesBlock(block int64) (reply, engine.EndpointSnapshot) {
	r.t.Helper()
	answerWith(r.sims[1:2], "eth_call", -32000, "header not found")
	rep := r.s1Asked("eth_call", func(i int) reply {
		rep := r.call(i, "eth_call", map[string]any{"to": addr, "data": "0x70a08231"}, hexBlock(block))
		mustOK(r.t, rep)
		return rep
	})
	if rep.endpoint == "s1" || rep.attempts != 2 {
		r.t.Fatalf("answered by %s after %d attempts: %s", rep.endpoint, rep.attempts, rep.body)
	}
	return rep, r.endpoint("s1")
}

// An indexer polls eth_getLogs from its last block + 1 to "latest". A node
// that has not reached fromBlock resolves "latest" below it and answers, as
// geth does, -32602 "invalid block range params": the range is malformed
// only on that node. For a block the pool has, that is lag: the read goes
// to an endpoint that has the block and is answered (a direct client of
// that endpoint gets the logs). Before, the error was taken for the
// request's and relayed. Beyond the pool head it still is the request's;
// with both ends numbers it is malformed anywhere.
func TestNotYet_LogsFromABlockTheEndpointLacksToLatestFailsOverAsLag(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	answerWith(r.sims[1:2], "eth_getLogs", -32602, "invalid block range params")
	top := r.status().MaxHead
	logs := func(from int64, to any) []any {
		return []any{map[string]any{"fromBlock": hexBlock(from), "toBlock": to}}
	}
	rep := r.s1Asked("eth_getLogs", func(i int) reply {
		return r.call(i, "eth_getLogs", logs(top, "latest")...)
	})
	s1 := r.endpoint("s1")
	t.Logf("logs from pool head %d to latest, s1 answering invalid block range: HTTP %d by %s after %d attempts %s; s1 failures %d",
		top, rep.status, rep.endpoint, rep.attempts, rep.body, s1.Rates.Failures)
	mustOK(t, rep)
	if rep.endpoint == "s1" || rep.attempts != 2 || s1.Rates.Failures != 0 {
		t.Fatalf("answered by %s after %d attempts, s1 failures %d: want another endpoint's answer after s1's, nothing counted", rep.endpoint, rep.attempts, s1.Rates.Failures)
	}

	answerWith(r.sims, "eth_getLogs", -32602, "invalid block range params")
	for _, tc := range []struct {
		name   string
		params []any
	}{
		{"beyond the block after the pool head", logs(top+2, "latest")},
		{"both ends numbers", logs(top, hexBlock(top-2))},
	} {
		rep := r.call(1, "eth_getLogs", tc.params...)
		mustError(t, rep, "invalid block range params")
		if rep.attempts != 1 {
			t.Fatalf("%s: %d attempts, want the first endpoint's error relayed", tc.name, rep.attempts)
		}
	}
}
