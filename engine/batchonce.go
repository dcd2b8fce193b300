package engine

// A batch's calls of methods in no table (an L2's own methods, a node's
// methods rpcdash does not list) are sent once, like a write, and do not
// wait for each other (batchOrder). Each was an upstream request of its
// own: a client's batch of 100 such calls, one HTTP request to an endpoint
// directly, was 100 upstream requests through rpcdash, and 200 when the
// endpoints answered -32601 (each call failed over alone), which burns a
// provider's rate limit the client never meets directly. They go upstream
// together (those after the batch's first write once it has ended), in batches of at most
// batchFanout (a batch refused for its size could not be sent again in
// smaller ones: it may have run), to one endpoint, never hedged:
//   - answered with one answer for each call in order: each is its call's
//     answer, the endpoint's own JSON-RPC error included (relayed as a
//     single call's is); the calls the endpoint does not have (-32601,
//     said before anything runs) go on together to the next endpoint, as a
//     single call fails over, and the last one's -32601 is relayed when
//     none has the method;
//   - a connection that never carried the batch (refused): the next
//     endpoint;
//   - refused as a whole with one JSON-RPC error object (a provider's
//     "batch requests are not allowed") or an HTTP 4xx but 408 (a gateway
//     taking no batches; nothing ran): no batch goes to that
//     endpoint for breaker.cooldown and the calls run one by one, as before;
//   - anything else once a connection carried it (an HTTP error, a 429,
//     answers missing or out of order, the deadline): each call is
//     answered as a single call sent once would be, that it may have run
//     (jsonrpc.CodeMayHaveRun), or rate limited.
// The writes after a batch's first write, on an EVM chain, go the same way
// once it has ended (they ran at once, one request each: 100 writes were
// 100 upstream requests, in any order), to its endpoint (write affinity)
// or one by one when that one cannot take the batch.
// With fewer than two such calls, no endpoint able to take a batch (none
// routable, panic routing, all backing off, taking no batches) or a recent
// write holding them, the calls run one by one as before.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// onceCall is a call of a method in no table planned for an upstream
// batch, and the channel closed when it has ended (batchOrder.admit: a
// read of the pending state after it waits for it).
type onceCall struct {
	batchCall
	done chan struct{}
}

// notHere is the -32601 an endpoint answered a call sent once (its method
// is not there), and its attempt's place in the call's trace (-1: none).
type notHere struct {
	res    result
	traced int
}

// onceElement is a batch element of a method in no table that waits for
// nothing (serveBatch).
type onceElement struct {
	i    int
	done chan struct{}
}

// sentOnceInBatch says whether el is a call to send in an upstream batch
// of calls sent once: of a method in no table, not a notification (a
// notification's answer is none to match). What it waits for (batchOrder:
// nothing, or the batch's first write) is all such calls'.
func (e *Engine) sentOnceInBatch(el jsonrpc.Element, after []chan struct{}) bool {
	if el.Err != nil || el.Req.IsNotification() {
		return false
	}
	if e.methods.InNoTable(el.Req.Method) {
		return true
	}
	// A write after the batch's first write, on an EVM chain (a Solana
	// write's preflight and blockhash rules are its own race's): those ran
	// at once after it, one request each, arriving in any order.
	return len(after) > 0 && e.cfg.Chain.Kind == "evm" && e.methods.Class(el.Req.Method) == jsonrpc.ClassWrite
}

// serveOnceAfter serves els, calls of methods in no table that wait for
// after (the batch's first write, why), once it has ended: in upstream
// batches as serveOnce does, planned then (write affinity is the first
// write's by then); a call whose own deadline passed first is not sent.
func (b *batchRun) serveOnceAfter(els []onceElement, after []chan struct{}, why string) {
	if len(els) == 0 {
		return
	}
	e := b.e
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		turn, ok, stop := e.awaitTurn(b.ctx, b.els[els[0].i].Req, after)
		defer stop()
		var now []onceElement
		for _, el := range els {
			req := b.els[el.i].Req
			if ok && time.Now().Before(b.ownDeadline(req.Method)) {
				now = append(now, el)
				continue
			}
			cut, cancel := b.elementCtx(req.Method)
			if !ok {
				cut = turn
			} // else its own deadline, passed
			b.results[el.i] = e.notSent(cut, req, why, b.start, b.trace(el.i))
			cancel()
			close(el.done)
		}
		b.serveOnce(now, why == waitFirstWrite)
	}()
}

// serveOnce plans els and sends them in upstream batches of at most
// batchFanout (see the top of the file), one for each deadline the calls
// have (a batch sent once is cut at its calls' deadline, which must be
// each one's own: a write waiting for its receipt has a minute). An id
// another call of the upstream batch bears already goes under one of
// rpcdash's own, as serveWhole does. afterFirstWrite: els follow the
// batch's first write, and so its endpoint whatever its pace (preferFirm).
func (b *batchRun) serveOnce(els []onceElement, afterFirstWrite bool) {
	e := b.e
	type chunk struct {
		calls []onceCall
		ids   chunkIDs
	}
	chunks := map[time.Time]*chunk{}
	flush := func(ch *chunk) {
		calls := ch.calls
		ch.calls = nil
		ch.ids.reset()
		switch len(calls) {
		case 0:
		case 1:
			b.onceAlone(calls[0])
		default:
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				b.sendOnce(calls)
			}()
		}
	}
	var memo methodFacts
	for _, el := range els {
		req, p, early, ok := e.planOne(b.els[el.i].Req, jsonrpc.ClassWrite, b.start, b.trace(el.i), &memo)
		if !ok {
			b.results[el.i] = early
			close(el.done)
			continue
		}
		p.preferFirm = afterFirstWrite
		dl := b.ownDeadline(req.Method)
		ch := chunks[dl]
		if ch == nil {
			ch = &chunk{ids: chunkIDs{size: batchFanout}}
			chunks[dl] = ch
		}
		var upID json.RawMessage
		if ch.ids.has(req.ID) {
			if upID = json.RawMessage(`"rpcdash-` + strconv.Itoa(el.i) + `"`); ch.ids.has(upID) {
				flush(ch)
				upID = nil
			}
		}
		ch.calls = append(ch.calls, onceCall{batchCall: batchCall{i: el.i, req: req, p: p, upID: upID}, done: el.done})
		if upID != nil {
			ch.ids.add(upID)
		} else {
			ch.ids.add(req.ID)
		}
		if len(ch.calls) == batchFanout {
			flush(ch)
		}
	}
	for _, ch := range chunks {
		flush(ch)
	}
}

// onceAlone runs a planned call sent once on its own, as serveOne runs a
// write: detached from its client, counting the upstream batches it went
// out in (that provably did not run it) as attempts.
func (b *batchRun) onceAlone(c onceCall) {
	b.spawnIn(b.onceSlots, func() {
		defer close(c.done)
		ctx, cancel := b.elementCtx(c.req.Method)
		defer cancel()
		ctx, detached := b.e.detachFromClient(ctx)
		defer detached()
		c.p.resent = c.sends > 0
		res := b.e.execute(ctx, c.req, c.p)
		res.attempts += c.sends
		b.results[c.i] = b.e.finishOne(ctx, c.req, c.p, res, b.start)
	})
}

// sendOnce sends calls upstream as one batch to one endpoint at a time
// (see the top of the file), within the earliest of their own deadlines
// and detached from the client, as a write is.
func (b *batchRun) sendOnce(calls []onceCall) {
	e := b.e
	earliest := b.bodyDeadline
	for _, c := range calls {
		if own := b.ownDeadline(c.req.Method); own.Before(earliest) {
			earliest = own
		}
	}
	ctx, cancel := context.WithDeadline(b.ctx, earliest)
	defer cancel()
	ctx, detached := e.detachFromClient(ctx)
	defer detached()

	var tried []*endpoint
	pending := calls
	// lastNo holds, for each call still pending, the -32601 the last
	// endpoint answered it (none: no endpoint answered it yet).
	lastNo := make(map[int]notHere)
	for len(pending) > 0 {
		ep := e.onceEndpoint(pending, tried)
		if ep == nil {
			break
		}
		role := rolePrimary
		if len(tried) > 0 {
			role = roleFailover
		}
		tried = append(tried, ep)
		r := newOnceRace(e, pending, earliest)
		r.launch(ctx, ep, role, nil, 0)
		end := <-r.done // the try ends by earliest or at shutdown (launch)
		for k := range pending {
			pending[k].sends++
		}
		if end.got == nil {
			putBuf(end.reply.body)
			r.ended(end, func(int) outcome { return end.reply.out }, nil, nil)
			e.batchFailed(ctx, ep, r.n, end.reply, end.end)
			if end.reply.notRun {
				break // it takes no batches: one by one
			}
			if !end.reply.sent && end.reply.out == outConnError {
				e.noteFailover(ep, "upstream batch sent once: "+end.reply.cause()+" (the connection never carried it)", false)
				continue
			}
			if !end.reply.sent {
				// Cut (its deadline, shutdown) before a connection carried it.
				for _, c := range pending {
					b.finishOnce(c, result{attempts: c.sends, class: jsonrpc.ClassWrite, err: &jsonrpc.Error{Code: jsonrpc.CodeUpstream,
						Message: fmt.Sprintf("not sent: cut (%s) before a connection to %s carried it; it is safe to send again", end.reply.cause(), ep.Name)}})
				}
				return
			}
			for _, c := range pending {
				b.finishOnce(c, e.onceFailed(c, ep, end.reply))
			}
			return
		}
		if bu := budgetOf(b.ctx); bu != nil && !bu.charge(int64(end.reply.body.Len())) {
			// Over the batch's answer bound: its calls get -32003 (settle).
			putBuf(end.reply.body)
			r.ended(end, func(int) outcome { return outCancelled }, nil, nil)
			for _, c := range pending {
				b.finishOnce(c, e.onceFailed(c, ep, batchReply{out: outCancelled}))
			}
			return
		}
		pending = b.takeOnce(r, end, pending, lastNo)
		putBuf(end.reply.body)
		if len(pending) > 0 {
			e.noteFailover(ep, fmt.Sprintf("upstream batch sent once: the methods of %d of its calls not served (-32601)", len(pending)), true)
		}
	}
	for _, c := range pending {
		if no, ok := lastNo[c.i]; ok {
			res := no.res
			if no.traced >= 0 {
				c.p.trace.won(no.traced) // its attempt's answer is the one relayed
			}
			if bu := budgetOf(b.ctx); bu != nil && !bu.charge(int64(res.body.Len())) {
				putBuf(res.body) // over the batch's answer bound: -32003 (settle)
				res = e.onceFailed(c, res.ep, batchReply{out: outCancelled})
			}
			res.attempts = c.sends
			b.finishOnce(c, res)
			continue
		}
		b.onceAlone(c) // provably never run: one by one
	}
}

// newOnceRace is the upstream batch of calls, sent once within deadline.
func newOnceRace(e *Engine, calls []onceCall, deadline time.Time) *batchRace {
	r := &batchRace{e: e, done: make(chan batchEnd, 1), once: true, deadline: deadline,
		calls: make([]batchCall, len(calls)), pos: make([]int, len(calls))}
	parts := make([][]byte, len(calls))
	size := len(parts) + 1
	seen := map[string]bool{}
	for k, c := range calls {
		r.calls[k], r.pos[k] = c.batchCall, k
		parts[k] = c.upstreamRaw()
		size += len(parts[k])
		if !seen[c.p.method] {
			seen[c.p.method] = true
			r.methods = append(r.methods, c.p.method)
		}
	}
	r.n = int64(len(calls))
	r.body = jsonrpc.AppendBatch(make([]byte, 0, size), parts)
	return r
}

// onceEndpoint is the endpoint an upstream batch of calls sent once goes
// to next: the best routable one not tried yet that takes batches now and
// is backing off none of their methods (one that answered -32601 lately
// comes after the others, and is still asked: another may not have the
// method either). nil when none, or in panic routing (each call's own
// race knows what to do then).
func (e *Engine) onceEndpoint(calls []onceCall, tried []*endpoint) *endpoint {
	first := calls[0].p
	rk := e.rank(first.method, jsonrpc.ClassWrite, false, false, 0, affinityPick{ep: first.prefer, firm: first.preferFirm}, false)
	if rk.panic {
		return nil
	}
	now := e.now()
	n := int64(len(calls))
	for _, c := range rk.order {
		if c.trial || c.tier != 0 || c.fallback {
			return nil
		}
		if len(tried) == 0 && first.prefer != nil && c.ep != first.prefer {
			return nil // a recent write's endpoint, which cannot take the batch: one by one, there first
		}
		if c.silent || slices.Contains(tried, c.ep) || !e.batchable(c.ep, n, now) ||
			slices.ContainsFunc(calls, func(oc onceCall) bool { return !c.ep.backoffEnd(oc.p.method, now).IsZero() }) {
			continue
		}
		return c.ep
	}
	return nil
}

// takeOnce takes the answers of end, each as its call's (see the top of
// the file), and returns the calls the endpoint does not have the method
// of, to send on; their -32601 goes in lastNo.
func (b *batchRun) takeOnce(r *batchRace, end batchEnd, calls []onceCall, lastNo map[int]notHere) (next []onceCall) {
	e, ep := b.e, end.t.ep
	took := end.end.Sub(end.t.start)
	outs := make([]outcome, len(r.calls))
	won := make([]bool, len(r.calls))
	var taken int64
	ep.heard(end.end)
	for k, c := range calls {
		part := end.got[k]
		if c.upID != nil {
			part = jsonrpc.WithResponseID(part, c.req.ID)
		}
		rep := upstreamReply{body: getBuf(), sent: true, status: http.StatusOK}
		rep.body.Write(part)
		e.classify(&rep, http.StatusOK, "", c.req)
		outs[k] = rep.out
		res := result{body: rep.body, info: rep.info, ep: ep, took: took}
		st := ep.stats(c.p.method)
		switch {
		case rep.out == outUnsupported && rep.info.ErrCode == jsonrpc.CodeMethodNotFound || e.unsentRefusal(c.req, &rep):
			st.markCannotServe(end.end)
			st.rates.Count(window.Attempts)
			ep.rates.Count(window.Attempts)
			if old, ok := lastNo[c.i]; ok {
				putBuf(old.res.body)
			}
			lastNo[c.i] = notHere{res: res, traced: end.t.traced[k]}
			if bu := budgetOf(b.ctx); bu != nil {
				bu.giveBack(int64(len(part))) // the next endpoint's answer is the one counted
			}
			next = append(next, c)
			continue
		case rep.out == outAnswer:
			st.rates.Count(window.Attempts, window.Success)
			st.served()
			taken++
		default:
			// The endpoint's own error (or an answer that is not one),
			// relayed as a single call sent once relays it: it may have run.
			st.rates.Count(window.Attempts)
			ep.rates.Count(window.Attempts)
			if rep.cause != "" {
				ep.setLastError(rep.cause, end.end)
			}
		}
		won[k] = true
		if old, ok := lastNo[c.i]; ok {
			putBuf(old.res.body)
			delete(lastNo, c.i)
		}
		res.attempts = c.sends
		b.finishOnce(c, res)
	}
	if taken > 0 {
		ep.rates.CountN(taken, window.Attempts, window.Success)
		ep.breaker.Success(false)
	}
	r.ended(end, func(k int) outcome { return outs[k] }, nil, func(k int) bool { return won[k] })
	return next
}

// onceFailed is what c gets when its upstream batch, sent to ep, failed
// after a connection may have carried it (reply): as a single call sent
// once, rate limited on a 429, else that it may have run.
func (e *Engine) onceFailed(c onceCall, ep *endpoint, reply batchReply) result {
	res := result{attempts: c.sends, class: c.p.class}
	if reply.out == outRateLimit {
		wait := max(reply.retryAfter.Round(time.Second), time.Second)
		res.err = &jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded, Message: fmt.Sprintf(
			"rate limited: asked to back off, by an HTTP 429 or a 503 with Retry-After (a %s request answered so is not sent on to another endpoint); retry after %ds; last: %s: upstream batch answered HTTP %d",
			c.p.class, int(wait/time.Second), ep.Name, reply.status)}
		res.retryAfter = wait
		return res
	}
	why := fmt.Sprintf("upstream batch to %s failed: %s", ep.Name, reply.cause())
	if reply.out == outTimeout {
		why = fmt.Sprintf("%s (%s still working on it)", e.timedOutWords(c.req.Method), ep.Name)
	}
	res.leftTo = ep.Name
	res.err = &jsonrpc.Error{Code: jsonrpc.CodeMayHaveRun, Message: why + "; it was " + mayHaveRun(ep.Name)}
	return res
}

// finishOnce accounts for res, c's outcome, as sendChunk does an answered
// call's, and ends c (done).
func (b *batchRun) finishOnce(c onceCall, res result) {
	e := b.e
	res = e.settle(b.ctx, c.req, c.p, res)
	took := e.now().Sub(b.start)
	e.traceTook(c.p, res, took)
	e.countUpstream(c.p.acct, res.attempts)
	e.countRequests(c.p.acct.name, c.p.class, res.out, took, 1)
	b.results[c.i] = res
	if c.done != nil {
		close(c.done)
	}
}
