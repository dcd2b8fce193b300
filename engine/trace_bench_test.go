package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// BenchmarkTrace_RequestPath is what a traced read with a hedge adds to the
// request path: open the trace, name the method, the hedge delay in force,
// two attempts started and ended, the win, the answer. It must not
// allocate.
func BenchmarkTrace_RequestPath(b *testing.B) {
	t := newTraceRing(1000, 3)
	ep := &endpoint{}
	ep.Name = "alpha"
	start := time.Now()
	rep := upstreamReply{out: outAnswer, status: 200}
	b.ReportAllocs()
	for b.Loop() {
		r := t.begin(t.reserve(1), start)
		r.setMethod("eth_getBalance", jsonrpc.ClassRead)
		r.hedgeDelay(50 * time.Millisecond)
		p := &attempt{ep: ep, role: rolePrimary, start: start}
		h := &attempt{ep: ep, role: roleHedge, start: start}
		i, j := r.attempt(t, p), r.attempt(t, h)
		r.endAttempt(j, h, rep, nil, start)
		r.won(j)
		r.finish(time.Millisecond, result{hedged: true}, 0)
		r.endAttempt(i, p, upstreamReply{out: outCancelled}, errLost, start)
	}
}
