package engine

// A batch's plain reads go upstream as batches, as a client talking to an
// endpoint directly would send them, and not one request per element: a
// 1000-element eth_getBalance batch took 1130 ms through rpcdash against
// 85 ms sent to the sim directly (100 elements: 140 against 59 ms), every
// element a round trip of its own, at most batchFanout at once, and each
// paying the slowest of many draws where the whole batch pays one. An
// element the upstream batch does not answer well (an error that is the
// endpoint's, a missing or foreign answer) and every element of an
// upstream batch that failed as a whole (an HTTP error, a body that is no
// array, no answer within the attempt deadline) runs on its own as any
// request does, with failover and hedging, within its own deadline: never
// an error a single request would not have been. Which elements qualify
// (forwardable): reads that wait for nothing in the batch and that nothing
// waits for, that a recent write does not hold to one endpoint, with an id
// no other element of their upstream batch has.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// batchCall is one element of a client's batch planned for an upstream
// batch.
type batchCall struct {
	i   int // its index in the client's batch
	req *jsonrpc.Request
	p   plan
}

// forwardable says whether el may go upstream in a batch with others (see
// the top of the file); its place in the batch's order was admitted with
// nothing to wait for and nothing waiting for it.
func (e *Engine) forwardable(el jsonrpc.Element) bool {
	return el.Err == nil && !el.NoAnswer() && e.methods.Class(el.Req.Method) == jsonrpc.ClassRead
}

// sendWhole sends calls to the best endpoint for them as one upstream
// batch and returns the answers it gave (a zero result where none: that
// call is rest) and the calls it did not answer well, for the caller to
// run one by one. sent says whether the batch went out.
func (e *Engine) sendWhole(ctx context.Context, calls []batchCall) (answers []result, rest []batchCall, sent bool) {
	tip, minHead := false, int64(0)
	for _, c := range calls {
		tip = tip || c.p.tip
		minHead = max(minHead, c.p.minHead)
	}
	rk := e.rank(calls[0].p.method, jsonrpc.ClassRead, tip, minHead, nil, false)
	if len(rk.order) == 0 || rk.panic {
		return nil, calls, false
	}
	first := rk.order[0]
	ep := first.ep
	if first.trial || first.tier != 0 || first.fallback || first.silent || first.cannotServe ||
		ep.breaker.State() != breaker.Closed || ep.drained.Load() || e.faultOf(ep) != nil {
		// A half-open trial, a fault being injected, anything but a plain
		// healthy endpoint: each call's own race knows what to do.
		return nil, calls, false
	}

	var limit time.Duration
	for _, c := range calls {
		d, _ := e.attemptDeadline(ep, ep.stats(c.p.method))
		limit = max(limit, d)
	}
	bctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	parts := make([][]byte, len(calls))
	for k, c := range calls {
		parts[k] = c.req.Raw
		c.p.acct.attempts[rolePrimary].Add(1)
		ep.acct.attempts[rolePrimary].Add(1)
	}
	n := int64(len(calls))
	start := e.now()
	ep.inflight.Add(n)
	body, ok := e.postBatch(bctx, ep, jsonrpc.AppendBatch(make([]byte, 0, 64*len(parts)), parts))
	ep.inflight.Add(-n)
	end := e.now()
	if !ok {
		return nil, calls, true
	}
	defer putBuf(body)
	ep.heard(end)

	answers = make([]result, len(calls))
	matched := make([]bool, len(calls))
	byID := make(map[string]int, len(calls)) // ids as sent: what an endpoint echoes, nearly always
	for j, c := range calls {
		byID[string(c.req.ID)] = j
	}
	for _, part := range jsonrpc.ArrayElements(body.Bytes()) {
		id := jsonrpc.ResponseID(part)
		k, ok := byID[string(id)]
		if !ok || matched[k] {
			k = slices.IndexFunc(calls, func(c batchCall) bool { return jsonrpc.SameID(c.req.ID, id) }) // 1.0 for 1
		}
		if k < 0 || matched[k] {
			continue // an answer to nothing asked: the calls left run alone
		}
		matched[k] = true
		c := calls[k]
		r := upstreamReply{body: getBuf(), sent: true, status: http.StatusOK}
		r.body.Write(part)
		e.classify(&r, http.StatusOK, "", c.req)
		if r.out != outAnswer {
			putBuf(r.body)
			matched[k] = false
			continue
		}
		res := result{body: r.body, info: r.info, ep: ep, attempts: 1, took: end.Sub(start), unhedged: true}
		if !r.info.HasError {
			if isHeadMethod(c.req.Method) {
				res.head = answerHead(c.req, part)
			}
			if e.cfg.Chain.Kind == "evm" && c.p.finality != "" {
				res.final = jsonrpc.ResultNumber(part)
			}
		}
		answers[k] = res
		ep.rates.Count(window.Attempts, window.Success)
		st := ep.stats(c.p.method)
		st.rates.Count(window.Attempts, window.Success)
		st.served()
	}
	for k, c := range calls {
		if !matched[k] {
			rest = append(rest, c)
		}
	}
	if len(rest) < len(calls) {
		ep.breaker.Success(false)
	}
	return answers, rest, true
}

// postBatch sends an upstream batch to ep and returns its answer when it
// is one: HTTP 200 and a JSON array (each element is judged by the
// caller). Anything else, the caller's calls run one by one.
func (e *Engine) postBatch(ctx context.Context, ep *endpoint, body []byte) (*bytes.Buffer, bool) {
	hreq, err := http.NewRequestWithContext(withProxy(ctx, ep), http.MethodPost, ep.url, bytes.NewReader(body))
	if err != nil {
		return nil, false
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := e.client.Do(hreq)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	buf, _ := e.readAnswer(ctx, resp)
	if buf == nil {
		return nil, false
	}
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(jsonrpc.TrimSpace(buf.Bytes()), []byte("[")) || !json.Valid(buf.Bytes()) {
		putBuf(buf)
		return nil, false
	}
	return buf, true
}

// batchRun is one client batch being served: where its elements' answers
// go and what bounds their goroutines.
type batchRun struct {
	e            *Engine
	ctx          context.Context
	els          []jsonrpc.Element
	results      []result
	start, began time.Time
	bodyDeadline time.Time
	trace        func(int) traceRef
	slots        chan struct{} // at most batchFanout elements in flight on their own
	wg           sync.WaitGroup
}

// spawn runs f in a goroutine once a slot is free.
func (b *batchRun) spawn(f func()) {
	b.slots <- struct{}{}
	b.wg.Add(1)
	go func() {
		defer func() { <-b.slots; b.wg.Done() }()
		f()
	}()
}

// ownDeadline is when an element of method must be answered by.
func (b *batchRun) ownDeadline(method string) time.Time {
	if own := b.began.Add(b.e.requestTimeout(method)); own.Before(b.bodyDeadline) {
		return own
	}
	return b.bodyDeadline
}

// elementCtx is the batch's context under an element's own deadline.
func (b *batchRun) elementCtx(method string) (context.Context, context.CancelFunc) {
	if own := b.ownDeadline(method); own.Before(b.bodyDeadline) {
		return context.WithDeadline(b.ctx, own)
	}
	return b.ctx, func() {}
}

// serveWhole serves the forwardable elements idx: in upstream batches of
// at most batchFanout, each to the best endpoint for it, the calls those
// do not answer well one by one. A single one runs as any element does.
func (b *batchRun) serveWhole(idx []int) {
	e := b.e
	if len(idx) < 2 {
		for _, i := range idx {
			b.spawn(func() {
				ctx, cancel := b.elementCtx(b.els[i].Req.Method)
				defer cancel()
				b.results[i] = e.serveOne(ctx, b.els[i].Req, b.start, b.trace(i))
			})
		}
		return
	}
	var chunk []batchCall
	var ids chunkIDs
	flush := func() {
		if len(chunk) == 0 {
			return
		}
		calls := chunk
		chunk = nil
		ids.reset()
		if len(calls) == 1 {
			b.alone(calls[0], false)
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.sendChunk(calls)
		}()
	}
	for _, i := range idx {
		req, p, early, ok := e.planOne(b.els[i].Req, jsonrpc.ClassRead, b.start, b.trace(i))
		switch {
		case !ok:
			b.results[i] = early
			continue
		case p.prefer != nil: // a recent write holds it to one endpoint
			b.alone(batchCall{i: i, req: req, p: p}, false)
			continue
		}
		if ids.has(req.ID, chunk) {
			flush() // its answer must be told apart from the other's
		}
		chunk = append(chunk, batchCall{i: i, req: req, p: p})
		ids.add(req.ID)
		if len(chunk) == batchFanout {
			flush()
		}
	}
	flush()
}

// sendChunk sends calls upstream as one batch within the earliest of
// their own deadlines and finishes each answered call; the rest run alone.
func (b *batchRun) sendChunk(calls []batchCall) {
	e := b.e
	ctx := b.ctx
	earliest := b.bodyDeadline
	for _, c := range calls {
		if own := b.ownDeadline(c.req.Method); own.Before(earliest) {
			earliest = own
		}
	}
	if earliest.Before(b.bodyDeadline) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, earliest)
		defer cancel()
	}
	answers, rest, sent := e.sendWhole(ctx, calls)
	for k, c := range calls {
		if answers != nil && answers[k].body != nil {
			b.results[c.i] = e.finishOne(b.ctx, c.req, c.p, answers[k], b.start)
		}
	}
	for _, c := range rest {
		b.alone(c, sent)
	}
}

// alone runs a planned call on its own, as any request; sent says that it
// already went upstream once in a batch (an attempt of its own count).
func (b *batchRun) alone(c batchCall, sent bool) {
	b.spawn(func() {
		ctx, cancel := b.elementCtx(c.req.Method)
		defer cancel()
		res := b.e.execute(ctx, c.req, c.p)
		if sent {
			res.attempts++
		}
		b.results[c.i] = b.e.finishOne(ctx, c.req, c.p, res, b.start)
	})
}

// chunkIDs tells whether an id is already in an upstream batch being
// built, by value as jsonrpc.SameID compares them, without comparing every
// pair: an id in its plainest spelling (digits, or a string without an
// escape) is looked up as it is written; the rare other spellings (1.0,
// 1e0, "\u0061") are compared with each one.
type chunkIDs struct {
	plain map[string]struct{}
	other bool // the chunk holds an id not in its plainest spelling
}

func (c *chunkIDs) reset() { clear(c.plain); c.other = false }

func (c *chunkIDs) add(id json.RawMessage) {
	if !plainID(id) {
		c.other = true
		return
	}
	if c.plain == nil {
		c.plain = make(map[string]struct{})
	}
	c.plain[string(id)] = struct{}{}
}

func (c *chunkIDs) has(id json.RawMessage, chunk []batchCall) bool {
	if plainID(id) && !c.other {
		_, ok := c.plain[string(id)]
		return ok
	}
	return slices.ContainsFunc(chunk, func(b batchCall) bool { return jsonrpc.SameID(b.req.ID, id) })
}

// plainID: an id no other spelling of which is plain (a whole number
// without sign, exponent or leading zero; a string without escapes).
func plainID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		return !bytes.ContainsRune(id, '\\')
	}
	if len(id) > 1 && id[0] == '0' {
		return false
	}
	for _, b := range id {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}
