package engine

// Ending a request's race: the winner relayed, an error answered, the
// other attempts stopped and the breaker's deferred verdicts given.

import (
	"slices"
	"strings"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// win returns the winning answer and cancels the rest; their goroutines
// finish on their own and a collector returns their buffers.
func (x *execution) win(d attemptDone) result {
	if d.a.role == roleHedge {
		x.p.acct.hedgesWon.Add(1)
		d.a.ep.acct.hedgesWon.Add(1)
		x.e.recent.count(x.p.acct.name, window.HedgeWon, 1)
	}
	x.p.trace.won(d.a.traceIdx)
	x.settleDeferred(true)
	for _, a := range x.live {
		a.outranBy.Store(int64(d.took))
	}
	x.stopRest(errLost)
	res := result{body: d.rep.body, info: d.rep.info, ep: d.a.ep, attempts: x.sent, hedged: x.hedges > 0,
		took: d.took}
	if isHeadMethod(x.req.Method) {
		res.head = d.rep.head
	}
	res.final, res.readAt = d.rep.final, d.rep.readAt
	return res
}

// heldAnswer relays the best answer held back, if any: one set aside while
// another endpoint was asked, else an endpoint's own error answer. Not a
// request sent once that an endpoint may have run after another said it
// did not (a -32601): that answer would say the request failed.
func (x *execution) heldAnswer() (result, bool) {
	if f := x.fallback; f != nil {
		x.fallback = nil
		return x.win(*f), true
	}
	if ea := x.errAnswer; ea != nil && !(x.p.class != jsonrpc.ClassRead && x.notRun(ea.rep) && x.leftTo() != "") {
		x.errAnswer = nil
		return x.relayError(*ea), true
	}
	return result{}, false
}

// relayError returns a JSON-RPC error answer as the request's answer: every
// attempt failed and this is what an endpoint said.
func (x *execution) relayError(d attemptDone) result {
	x.p.trace.won(d.a.traceIdx)
	x.settleDeferred(false)
	x.stopRest(errRequestDone)
	return result{body: d.rep.body, info: d.rep.info, ep: d.a.ep, attempts: x.sent, hedged: x.hedges > 0,
		took: d.took}
}

func (x *execution) fail(msg string) result {
	return x.failWith(&jsonrpc.Error{Code: jsonrpc.CodeUpstream, Message: msg + x.panicNote()})
}

func (x *execution) failWith(err *jsonrpc.Error) result {
	x.settleDeferred(false)
	res := result{err: err, attempts: x.sent, hedged: x.hedges > 0}
	if x.p.class != jsonrpc.ClassRead {
		res.leftTo = x.leftTo()
	}
	x.stopRest(errRequestDone)
	return res
}

// leftTo names the endpoints a request sent once may have reached: those
// whose attempts ended after a connection was made, and those still
// running, whose fate is unknown, but for those abandoned unsent
// (abandonUnsent).
func (x *execution) leftTo() string {
	names := slices.Clip(x.left)
	for _, a := range x.live {
		if a.gate == nil || !a.gate.abandoned() {
			names = append(names, a.ep.Name)
		}
	}
	return endpointNames(names)
}

// endpointNames is names sorted, each once, comma-separated.
func endpointNames(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ", ")
}

// panicNote says, for a request that failed in panic routing, why every
// endpoint was out of the ordinary routing.
func (x *execution) panicNote() string {
	if !x.panicked || x.p.pinned != nil {
		return ""
	}
	p := x.p
	return "; routed in panic, " + noRouteError(x.e.rank(p.method, p.class, p.tip, p.showsHead, p.minHead, affinityPick{}, true)).Message
}

// settleDeferred gives the breaker its verdict on the reads answered with
// their endpoint's own error: a failure when another endpoint answered the
// same request (answered), none when no endpoint could — then the request,
// not the endpoints, is the likelier culprit (a block nobody has yet), and
// a client's bad request must not open breakers across the pool. It also
// returns the buffers set aside.
func (x *execution) settleDeferred(answered bool) {
	for _, a := range x.deferred {
		if a.settle() && answered {
			a.ep.breaker.Failure(false, a.failCause)
		}
	}
	x.deferred = nil
	for _, f := range []**attemptDone{&x.fallback, &x.errAnswer} {
		if *f != nil {
			putBuf((*f).rep.body)
			*f = nil
		}
	}
}

func (x *execution) stopRest(cause error) {
	if len(x.live) == 0 {
		return
	}
	now := x.e.now().UnixNano()
	for _, a := range x.live {
		a.cancelAt.Store(now)
		switch {
		case a.toVerdict:
			continue // runs on to a verdict (see start)
		case cause == errLost && a.overdue.Load() && a.ep.sampling.CompareAndSwap(false, true):
			// A loser past its deadline would only say "slower than it ran",
			// and the deadline caps what losers say at the slowest answer
			// the endpoint gave: cut every slow attempt and the deadline
			// never sees the tail it cuts. One such attempt per endpoint at
			// a time runs on to its answer (or the request's deadline).
			a.sampling.Store(true)
			continue
		case a.explore && !a.overdue.Load():
			continue // runs on to its answer or its deadline (attemptOverdue)
		case cause == errLost && x.e.owesSilenceVerdict(a):
			a.heldForSilence.Store(true)
			continue // runs on to the deadline where its silence is judged
		}
		a.cancel(cause)
	}
	n := len(x.live)
	tracked := x.e.track(1)
	go func() {
		if tracked {
			defer x.e.wg.Done()
		}
		for range n {
			d := <-x.done
			putBuf(d.rep.body)
		}
	}()
}
