package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// logsOf is the logs of an eth_getLogs reply, one per block on the sims.
func logsOf(t testing.TB, r reply) []map[string]any {
	t.Helper()
	mustOK(t, r)
	var logs []map[string]any
	if err := json.Unmarshal([]byte(resultString(t, r)), &logs); err != nil {
		t.Fatalf("not a list of logs: %s", r.body)
	}
	return logs
}

// newestLogs reads the logs of block n alone, as viem's and ethers' log
// watchers do right after eth_blockNumber told them the head.
func (r *headRig) newestLogs(id int, n int64) reply {
	return r.call(id, "eth_getLogs", map[string]any{"fromBlock": hexBlock(n), "toBlock": hexBlock(n)})
}

// The probes found s1 a block behind the pool head (within
// chain.max_head_lag, so still in tip-dependent reads). A range ending at
// the pool head names a block s1 does not have: it goes to s0, as a read of
// that block by number does, and every read has the block's log. Before,
// eth_getLogs named no block to route by: s1 was asked in turn and its []
// (a node's answer for a range past its head) relayed, the log lost.
// (router.lag_penalty 0: only the block asked for keeps s1 out.)
func TestLogs_RangeEndingAtThePoolHeadSkipsAnEndpointBelowIt(t *testing.T) {
	r := newHeadRig(t, 2, func(c *engine.Config) { c.Router.LagPenalty = 0 })
	r.warmUp()
	r.sims[1].SetHeadLag(1)
	r.round()
	top := r.status().MaxHead
	before := r.sims[1].MethodCount("eth_getLogs")
	for i := range 6 {
		rep := r.newestLogs(i, top)
		if logs := logsOf(t, rep); len(logs) != 1 {
			t.Fatalf("read %d of block %d (s1 at %d): %d logs from %s, want 1", i, top, r.sims[1].Head(), len(logs), rep.endpoint)
		}
	}
	if n := r.sims[1].MethodCount("eth_getLogs") - before; n != 0 {
		t.Fatalf("s1, a block behind, was asked %d times for the logs of block %d", n, top)
	}
}

// s1 fell a block behind since the last probe, and the chain made a block
// since: the pool head carried at the pace says block top+1 exists, though
// no probe has seen it. s1 answers [] for it; an empty list from an
// endpoint not known to have the block is set aside while another is
// asked, as a null is, and s0's log relayed.
func TestLogs_EmptyAnswerOfAnEndpointBehindIsSetAside(t *testing.T) {
	r := newHeadRig(t, 2, nil)
	r.warmUp()
	block := r.status().MaxHead + 1
	r.sims[1].SetHeadLag(1)
	r.clock.Advance(time.Second)
	rep := r.s1Asked("eth_getLogs", func(i int) reply {
		rep := r.newestLogs(i, block)
		if logs := logsOf(t, rep); len(logs) != 1 {
			t.Fatalf("read %d of block %d (s1 at %d): %d logs from %s after %d attempts, want 1", i, block, r.sims[1].Head(), len(logs), rep.endpoint, rep.attempts)
		}
		return rep
	})
	if rep.endpoint != "s0" || rep.attempts != 2 {
		t.Fatalf("answered by %s after %d attempts: %s", rep.endpoint, rep.attempts, rep.body)
	}
}
