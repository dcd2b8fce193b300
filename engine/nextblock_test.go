package engine_test

import (
	"strconv"
	"testing"
	"time"
)

// seenLate is a pool whose head rpcdash saw late: the probes found block
// top 900 ms after it was made, and 200 ms later the chain made top+1.
// Carried at the pace the pool head is still top, but s0 has top+1, and a
// client following s0's head (a newHeads feed) asks for it at once; s1
// fell a block behind since the probes and has not. Both are known at
// top, so they take turns.
func seenLate(t *testing.T) (r *headRig, top int64) {
	t.Helper()
	r = newHeadRig(t, 2, nil)
	r.warmUp()
	r.clock.Advance(1900 * time.Millisecond)
	r.probeAll()
	r.sims[1].SetHeadLag(1)
	r.clock.Advance(200 * time.Millisecond)
	top = r.status().MaxHead
	if r.sims[0].Head() != top+1 || r.sims[1].Head() != top {
		t.Fatalf("s0 at %d, s1 at %d, pool head %d: want s0 a block past the pool head", r.sims[0].Head(), r.sims[1].Head(), top)
	}
	return r, top
}

// The block after the pool head rpcdash knows may already exist: a null
// (or [], or "header not found") for it from an endpoint that lacks it is
// set aside while one more endpoint is asked, and s0's answer relayed.
// Before, the block was judged to exist nowhere yet and s1's answer was
// relayed: a client of s0 alone would have had the block.
func TestNextBlock_AnEndpointThatLacksItIsNotTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		method string
		params func(n int64) []any
		check  func(t *testing.T, rep reply, n int64)
	}{
		{"eth_getBlockByNumber", func(n int64) []any { return []any{hexBlock(n), false} }, func(t *testing.T, rep reply, n int64) {
			mustOK(t, rep)
			if resultString(t, rep) == "null" || blockNumberOf(t, rep) != n {
				t.Fatalf("block %d: %s from %s after %d attempts", n, rep.body, rep.endpoint, rep.attempts)
			}
		}},
		{"eth_getLogs", func(n int64) []any {
			return []any{map[string]any{"fromBlock": hexBlock(n), "toBlock": hexBlock(n)}}
		}, func(t *testing.T, rep reply, n int64) {
			if logs := logsOf(t, rep); len(logs) != 1 {
				t.Fatalf("logs of block %d: %s from %s after %d attempts, want its log", n, rep.body, rep.endpoint, rep.attempts)
			}
		}},
		{"eth_call", func(n int64) []any {
			return []any{map[string]any{"to": addr, "data": "0x70a08231"}, hexBlock(n)}
		}, func(t *testing.T, rep reply, n int64) { mustOK(t, rep) }},
	} {
		t.Run(tc.method, func(t *testing.T) {
			r, top := seenLate(t)
			if tc.method == "eth_call" {
				answerWith(r.sims[1:], "eth_call", -32000, "header not found")
			}
			rep := r.s1Asked(tc.method, func(i int) reply {
				rep := r.call(i, tc.method, tc.params(top+1)...)
				tc.check(t, rep, top+1)
				return rep
			})
			if rep.endpoint != "s0" || rep.attempts != 2 {
				t.Fatalf("answered by %s after %d attempts: %s", rep.endpoint, rep.attempts, rep.body)
			}
		})
	}
}

// The cost of that rule is bounded: a client polling the block after the
// pool head before any endpoint has it costs two upstream requests per
// poll, not one per endpoint (three here), and a block further ahead one.
func TestNextBlock_PollingItCostsOneMoreRequestAtMost(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	top := r.status().MaxHead
	const polls = 10
	for _, tc := range []struct {
		ahead    int64
		attempts int
	}{{1, 2}, {2, 1}} {
		before := r.upstreamCount("eth_getBlockByNumber")
		for i := range polls {
			rep := r.call(i, "eth_getBlockByNumber", "0x"+strconv.FormatInt(top+tc.ahead, 16), false)
			mustOK(t, rep)
			if got := resultString(t, rep); got != "null" || rep.attempts != tc.attempts {
				t.Fatalf("poll %d of pool head + %d: %s after %d attempts, want null after %d", i, tc.ahead, got, rep.attempts, tc.attempts)
			}
		}
		if n := r.upstreamCount("eth_getBlockByNumber") - before; n != int64(polls*tc.attempts) {
			t.Fatalf("%d polls of pool head + %d cost %d upstream requests, want %d", polls, tc.ahead, n, polls*tc.attempts)
		}
	}
	if failures, opened := r.failuresCounted(); failures != 0 || len(opened) > 0 {
		t.Fatalf("polls counted %d failures, breakers not closed %v", failures, opened)
	}
}
