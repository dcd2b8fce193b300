package engine

// A batch's plain reads go upstream as batches, as a client talking to an
// endpoint directly would send them, and not one request per element: a
// 1000-element eth_getBalance batch took 1130 ms through rpcdash against
// 85 ms sent to the sim directly (100 elements: 140 against 59 ms), every
// element a round trip of its own, at most batchFanout at once, and each
// paying the slowest of many draws where the whole batch pays one. An
// element the upstream batch does not answer well (an error that is the
// endpoint's, an answer its own race would set aside) and every element of
// an upstream batch that failed as a whole (an HTTP error, a body that is
// no array, answers missing, foreign or out of order, no answer in time)
// runs on its own as any request does, with failover and hedging, within
// its own deadline: never an error a single request would not have been.
// Which elements qualify: reads that wait for nothing in the batch and
// that nothing waits for (forwardable), that a recent write does not hold
// to one endpoint and that name no block beyond the pool's head. An id
// another element of the upstream batch bears already goes under one of
// rpcdash's own (upID), put back in its answer. Read notifications go in
// upstream batches of their own, never hedged: 1000 eth_blockNumber
// notifications, each a request of its own and hedged, were 1014 upstream
// requests (0.25 s against 0.02 s sent directly).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// batchCall is one element of a client's batch planned for an upstream
// batch.
type batchCall struct {
	i     int // its index in the client's batch
	req   *jsonrpc.Request
	p     plan
	sends int // the upstream batches it went out in before
	// sentTo: the endpoints of those batches, named when its deadline
	// passed in them (alone).
	sentTo []string
	// upID is the id it goes upstream under when its own is already in its
	// upstream batch (nil: its own), put back in its answer.
	upID json.RawMessage
	// notHere: the -32601 the endpoint of its last upstream batch answered
	// it (the method is not there), relayed when no endpoint left has it.
	notHere *result
}

// sent counts n more upstream batches it went out in, to those endpoints.
func (c *batchCall) sent(n int, to []string) {
	if n > 0 {
		c.sends += n
		c.sentTo = append(slices.Clip(c.sentTo), to...)
	}
}

// upstreamRaw is the call as its upstream batch carries it.
func (c batchCall) upstreamRaw() []byte {
	if c.upID == nil {
		return c.req.Raw
	}
	return c.req.RawWithID(c.upID)
}

// upstreamID is the id its answer in the upstream batch bears.
func (c batchCall) upstreamID() json.RawMessage {
	if c.upID == nil {
		return c.req.ID
	}
	return c.upID
}

// upstreamBatchMax is the most calls one upstream batch holds: geth's
// default batch limit, and the most the large providers take. A client's
// batch goes upstream as it came where it can (one latency draw, as its
// client talking to the endpoint directly would pay; splitting a batch of
// 1000 into ten took 85 ms at the median where the endpoint answered the
// whole in 60), and in batches of batchFanout to an endpoint that refused
// a larger one (smallBatchesUntil).
const upstreamBatchMax = 1000

// forwardable says whether el may go upstream in a batch with others (see
// the top of the file); its place in the batch's order was admitted with
// nothing to wait for and nothing waiting for it. A read notification is
// one too, in an upstream batch of notifications (serveWhole).
func (e *Engine) forwardable(el jsonrpc.Element) bool {
	return el.Err == nil && e.methods.Class(el.Req.Method) == jsonrpc.ClassRead
}

// takeElement judges one element of an upstream batch's answer as the
// call's own attempt would be judged (classify, then setAside's rules),
// and returns it as the call's result when it is one to relay.
func (e *Engine) takeElement(ep *endpoint, c batchCall, part []byte, took time.Duration) (result, outcome, bool) {
	if c.upID != nil {
		part = jsonrpc.WithResponseID(part, c.req.ID)
	}
	r := upstreamReply{body: getBuf(), sent: true, status: http.StatusOK}
	r.body.Write(part)
	e.classify(&r, http.StatusOK, "", c.req)
	if r.notYet {
		e.placeNotYet(ep, c.req, &r)
	}
	if r.out == outUnsupported && r.info.ErrCode == jsonrpc.CodeMethodNotFound {
		// The endpoint does not have the method: the call goes on to the
		// next one, with the others so answered (sendChunk), and this
		// answer is relayed if none has it.
		st := ep.stats(c.p.method)
		st.markCannotServe(e.now())
		st.rates.Count(window.Attempts)
		ep.rates.Count(window.Attempts)
		return result{body: r.body, info: r.info, ep: ep, took: took, unhedged: true, notServed: true}, r.out, false
	}
	if r.out != outAnswer {
		putBuf(r.body)
		return result{}, r.out, false
	}
	r.behind = e.missedBlockhash(ep, c.req, &r) || e.missedSignature(ep, c.req, &r) || e.missedReceipt(ep, c.req, &r)
	if !r.info.HasError {
		r.head = answerHead(c.req, part)
		if r.head > 0 {
			e.observeHead(ep, r.head, false) // a passive answer's head counts, as finishAttempt counts it
		} else if e.genesisAnswer(ep, c.req, part) {
			r.behind = true
		}
		if e.cfg.Chain.Kind == "evm" && c.p.finality != "" {
			r.final = jsonrpc.ResultNumber(part)
		}
		if e.cfg.Chain.Kind == "solana" {
			r.readAt = jsonrpc.ReadSlot(c.req.Method, part)
		} else {
			r.readAt = latestAt(c.req.Method, r.head)
		}
	}
	if e.heldBack(c.p, ep, &r) != holdNone {
		putBuf(r.body)
		return result{}, outAnswer, false
	}
	res := result{body: r.body, info: r.info, ep: ep, attempts: 1, took: took, unhedged: true, final: r.final, readAt: r.readAt}
	if isHeadMethod(c.req.Method) {
		res.head = r.head
	}
	return res, outAnswer, true // counted a success by take
}

// batchFailed notes an upstream batch of n calls that failed as a whole: a
// 429 backs the whole endpoint off (its limit is not one method's; its
// calls, sent again alone at once, would each meet it); a batch of more
// than batchFanout calls the endpoint answered but not well (a provider's
// limit on a batch's size, or on its answer's) leaves it batches of
// batchFanout at most for server.stats_window (a limit stays, an HTTP 500
// may have been a passing one: a larger batch is tried again then); any
// other failure but the client's leaving keeps
// upstream batches off the endpoint for breaker.cooldown (a node that
// refuses batches, hangs on them or runs them past their deadline; its
// single calls are judged as ever).
func (e *Engine) batchFailed(ctx context.Context, ep *endpoint, n int64, reply batchReply, end time.Time) {
	if ctx.Err() != nil {
		return // the calls' own deadline, a client gone, shutdown, the answer budget: nothing of the endpoint
	}
	if n > batchFanout && (reply.out == outHTTPError || reply.out == outInvalid) {
		// It answered (an HTTP error, a body that is not its answers): not a
		// timeout after its header, which is a hang as any other.
		ep.smallBatchesUntil.Store(end.Add(e.cfg.Server.StatsWindow).UnixNano())
		return
	}
	ep.noBatchUntil.Store(end.Add(e.cfg.Breaker.Cooldown).UnixNano())
	if reply.out != outRateLimit {
		return
	}
	ep.heard(end)
	ep.rates.Count(window.Attempts, window.RateLimited)
	b := ep.backOffWhole(end, reply.retryAfter, e.cfg.Breaker.BackoffBase, e.cfg.Breaker.BackoffMax)
	ep.setLastError(fmt.Sprintf("HTTP %d on an upstream batch", reply.status), end)
	if !b.running {
		e.events.add(Event{Type: EventBackoff, Endpoint: ep.Name, Message: b.message("")})
	}
}

// inOrder says whether an upstream batch's answers are one for each call
// sent, in the order sent: only then are they taken. JSON-RPC lets a
// server answer a batch in any order, but nodes and providers answer in
// the order asked, and an id alone cannot tell an answer to the call that
// bears it from one given another call's id: an endpoint answering each
// call with its neighbour's id (a sim mode; a proxy mixing answers up)
// had its balance taken for a chain id, and a balance for the head of the
// chain, which flagged it ahead. Anything else and every call runs alone.
func inOrder(parts [][]byte, calls []batchCall) bool {
	if len(parts) != len(calls) {
		return false
	}
	for j, c := range calls {
		if id, want := jsonrpc.ResponseID(parts[j]), c.upstreamID(); !bytes.Equal(id, want) && !jsonrpc.SameID(id, want) {
			return false
		}
	}
	return true
}

// batchReply is what postBatch got: the answer's body when it is an array
// answered HTTP 200 (nil otherwise), its status and Retry-After.
type batchReply struct {
	body       *bytes.Buffer
	status     int
	retryAfter time.Duration
	out        outcome // how it failed (outAnswer when it did not)
	// offChain: it answered, from an endpoint found on the wrong chain
	// meanwhile (batchRace.offChain).
	offChain bool
	// sent: its body began to be written (asked only of a batch sent once,
	// postBatch's once: sendGate; a batch of reads is taken to have left).
	// notRun: answered for a batch sent once, it was refused as a whole
	// before any of it ran (batchRefusedUnrun).
	sent, notRun bool
	// whole: the batch was answered with one JSON-RPC error object, in
	// words (cause).
	whole string
}

// cause says how an upstream batch failed, for the failover's event.
func (b batchReply) cause() string {
	switch {
	case b.offChain:
		return "answered after it was found on the wrong chain"
	case b.whole != "":
		return b.whole
	case b.out == outHTTPError:
		return fmt.Sprintf("HTTP %d", b.status)
	case b.out == outRateLimit:
		return "HTTP 429"
	case b.out == outInvalid:
		return "answers not one for each call in the order asked"
	}
	return b.out.String()
}

// postBatch sends an upstream batch to ep. Only an array answered HTTP 200
// is an answer (each element is judged by the caller), or to a batch of
// notifications (unanswered) any 2xx, as to a single notification: a node
// answers them nothing, some answer each with id null; anything else and
// the calls run one by one. A batch of calls sent once (once: methods in
// no table, batchonce.go) is not replayable by the transport, and its
// reply says whether a connection carried it (sent), as a write's does.
func (e *Engine) postBatch(ctx context.Context, ep *endpoint, body []byte, unanswered, once bool) batchReply {
	var gate *sendGate
	if once {
		ctx, gate = gated(ctx)
	}
	resp, err := e.post(ctx, ep, body, !once)
	if err != nil {
		sent := !once || !gate.abandon() // reads: taken to have left
		return batchReply{out: cutOutcome(ctx), sent: sent && !errors.Is(err, errBadUpstreamRequest)}
	}
	defer resp.Body.Close()
	out := batchReply{status: resp.StatusCode, out: statusOutcome(resp.StatusCode, resp.Header.Get("Retry-After")), sent: true}
	if out.out == outRateLimit {
		out.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), e.now())
		return out
	}
	buf, rep := e.readAnswer(ctx, resp)
	if buf == nil {
		if rep.out == outTimeout || rep.out == outCancelled || ctx.Err() != nil {
			out.out = cutOutcome(ctx) // cut while its answer was read
		}
		return out
	}
	if unanswered && resp.StatusCode/100 == 2 {
		out.body, out.out = buf, outAnswer
		return out
	}
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(jsonrpc.TrimSpace(buf.Bytes()), []byte("[")) || !jsonrpc.Valid(buf.Bytes()) {
		if info := jsonrpc.InspectResponse(buf.Bytes()); info.Valid && info.HasError {
			out.whole = fmt.Sprintf("one error for the whole batch: JSON-RPC error %d: %s", info.ErrCode, e.upstreamText(info.ErrMessage))
			out.notRun = once && batchRefusedUnrun(resp.StatusCode, info)
		} else if once {
			out.notRun = batchRefusedUnrun(resp.StatusCode, info)
		}
		putBuf(buf)
		return out
	}
	out.body, out.out = buf, outAnswer
	return out
}

// batchRefusedUnrun says that an upstream batch was refused before any of
// its calls ran: an HTTP 4xx but a timeout's 408 (a client error: the
// request refused, not processed; a node that cannot parse a batch), or a
// single JSON-RPC error that says so: by its code (a parse error; an
// invalid request, as geth's "batch too large" is; a method not found; a
// limit exceeded, as Besu's "Number of requests exceeds max batch size"
// is), or by naming the batch itself (Nethermind's, Erigon's batch
// limits) but not a timeout. A single error of any other kind may come
// after the calls ran (a gateway's timeout, an internal error): the writes
// in it are not sent again.
func batchRefusedUnrun(status int, info jsonrpc.ResponseInfo) bool {
	if status >= http.StatusBadRequest && status < http.StatusInternalServerError {
		return status != http.StatusRequestTimeout
	}
	if status >= http.StatusInternalServerError || !info.Valid || !info.HasError {
		return false
	}
	switch info.ErrCode {
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeLimitExceeded:
		return true
	}
	msg := strings.ToLower(info.ErrMessage)
	return strings.Contains(msg, "batch") && !strings.Contains(msg, "time")
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
	// onceSlots: as slots, for the calls sent once run on their own
	// (batchonce.go), which the elements in slots may wait for.
	onceSlots chan struct{}
	wg        sync.WaitGroup
}

// spawn runs f in a goroutine once a slot is free.
func (b *batchRun) spawn(f func()) { b.spawnIn(b.slots, f) }

func (b *batchRun) spawnIn(slots chan struct{}, f func()) {
	slots <- struct{}{}
	b.wg.Add(1)
	go func() {
		defer func() { <-slots; b.wg.Done() }()
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
// idx are all calls or all notifications (an upstream batch of
// notifications has no answers to match, see postBatch).
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
	// A chunk is made at the size it can reach: grown by appends, a
	// 1000-call chunk cost 330 KB of copies.
	left := len(idx)
	newChunk := func() []batchCall { return make([]batchCall, 0, min(left, upstreamBatchMax)) }
	chunk := newChunk()
	ids := chunkIDs{size: cap(chunk)}
	// The reads' weights go into the hedge budget at once, before any of
	// them is sent (a lock per call was a tenth of the planning).
	weight, calls := 0.0, 0
	deposit := func() {
		if calls > 0 {
			e.hedge.deposit(weight, calls)
			weight, calls = 0, 0
		}
	}
	flush := func() {
		deposit()
		if len(chunk) == 0 {
			return
		}
		calls := chunk
		chunk = newChunk()
		ids.reset()
		if len(calls) == 1 {
			b.alone(calls[0])
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.sendChunk(calls, nil)
		}()
	}
	var memo methodFacts
	for _, i := range idx {
		req, p, early, ok := e.planOne(b.els[i].Req, jsonrpc.ClassRead, b.start, b.trace(i), &memo)
		left--
		if !ok {
			b.results[i] = early
			continue
		}
		weight += p.weight
		calls++
		if p.prefer != nil || // a recent write holds it to one endpoint
			p.minHead > e.heads.top.Load() { // a block beyond the pool's head: the endpoints behind stay eligible for the others
			deposit()
			b.alone(batchCall{i: i, req: req, p: p})
			continue
		}
		// Its answer must be told apart from the other's: it goes under an
		// id of rpcdash's own (1000 calls all with id 1, as a hand-written
		// script sends them, were 1000 upstream requests). A notification
		// has no answer to tell apart.
		var upID json.RawMessage
		if !req.IsNotification() && ids.has(req.ID) {
			if upID = json.RawMessage(`"rpcdash-` + strconv.Itoa(i) + `"`); ids.has(upID) {
				flush()
				upID = nil
			}
		}
		chunk = append(chunk, batchCall{i: i, req: req, p: p, upID: upID})
		switch {
		case upID != nil:
			ids.add(upID)
		case !req.IsNotification():
			ids.add(req.ID)
		}
		if len(chunk) == upstreamBatchMax {
			flush()
		}
	}
	flush()
}

// sendChunk sends calls upstream as one batch within the earliest of
// their own deadlines and finishes each answered call; the calls whose
// method its endpoint does not have (-32601) go on together to another
// endpoint (not one of tried, which answered them so already), and their
// last -32601 is relayed when none is left; the rest run alone.
func (b *batchRun) sendChunk(calls []batchCall, tried []*endpoint) {
	e := b.e
	ctx := b.ctx
	earliest := b.bodyDeadline
	for k, c := range calls {
		if k > 0 && c.req.Method == calls[k-1].req.Method {
			continue // the same deadline as the one before
		}
		if own := b.ownDeadline(c.req.Method); own.Before(earliest) {
			earliest = own
		}
	}
	if earliest.Before(b.bodyDeadline) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, earliest)
		defer cancel()
	}
	late := &lateAnswers{ctx: b.ctx}
	answers, sends, to := e.sendWhole(ctx, calls, tried, late)
	if answers == nil && len(calls) > batchFanout && ctx.Err() == nil && !late.isArmed() {
		// No endpoint took (or answered) so large a batch: in smaller ones,
		// of a copy: a try let go of may still read calls (runOn).
		calls = slices.Clone(calls)
		for k := range calls {
			calls[k].sent(sends[k], to)
		}
		for part := range slices.Chunk(calls, batchFanout) {
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				b.sendChunk(part, tried)
			}()
		}
		return
	}
	// The answered calls are counted in runs of one series (runOf), each as
	// waited for until the upstream batch's answer was judged.
	took := e.now().Sub(b.start)
	run := runOf[requestSeries]{flush: func(s requestSeries, n int64) { e.countRequests(s.label, s.cls, s.out, took, n) }}
	var again []batchCall
	var from *endpoint
	for k, c := range calls {
		answered := answers != nil && answers[k].body != nil
		if answered && answers[k].notServed {
			c.sent(sends[k], to)
			if c.notHere != nil {
				putBuf(c.notHere.body)
			}
			res := answers[k]
			c.notHere, from = &res, res.ep
			again = append(again, c)
			continue
		}
		if !answered && c.notHere != nil && sends[k] == 0 {
			// No endpoint left that has not answered it -32601: that
			// answer is its, as a single call's last -32601 is.
			res := *c.notHere
			res.notServed = false
			if bu := budgetOf(b.ctx); bu != nil && !bu.charge(int64(res.body.Len())) {
				putBuf(res.body)
				res = result{err: &jsonrpc.Error{Code: jsonrpc.CodeUpstream, Message: "cut"}} // -32003 (settle)
			}
			answers = ensure(answers, len(calls))
			answers[k], answered = res, true
		}
		if answered {
			answers[k].attempts += c.sends
			res := e.settle(b.ctx, c.req, c.p, answers[k])
			e.traceTook(c.p, res, took)
			e.countUpstream(c.p.acct, res.attempts)
			run.add(requestSeries{c.p.acct.name, c.p.class, res.out})
			b.results[c.i] = res
			continue
		}
		if c.notHere != nil {
			putBuf(c.notHere.body)
			c.notHere = nil
		}
		c.sent(sends[k], to)
		b.aloneBeside(c, late, k)
	}
	run.done()
	if len(again) > 0 {
		b.sendChunk(again, append(slices.Clip(tried), from))
	}
}

// ensure is answers, made n long when nil.
func ensure(answers []result, n int) []result {
	if answers == nil {
		return make([]result, n)
	}
	return answers
}

// alone runs a planned call on its own, as any request, counting the
// upstream batches it already went out in as attempts of its own. One
// whose deadline passed in them, or whose client went away, is not sent
// again: sent with no time left, it was an attempt that never went out,
// counted in its X-Rpcdash-Attempts and trace as a failover.
func (b *batchRun) alone(c batchCall) { b.aloneBeside(c, nil, 0) }

// aloneBeside is alone for call k of an upstream batch that may run on
// past its own deadline (late armed, see lateAnswers): the batch's answer,
// when it comes before the call's own, is the call's.
func (b *batchRun) aloneBeside(c batchCall, late *lateAnswers, k int) {
	armed := late.isArmed()
	b.spawn(func() {
		ctx, cancel := b.elementCtx(c.req.Method)
		defer cancel()
		raced := ctx
		var res result
		answered := false
		if armed {
			var stop context.CancelCauseFunc
			raced, stop = context.WithCancelCause(ctx)
			defer stop(nil)
			res, answered = late.begin(k, stop)
		}
		if !answered {
			if err := ctxErr(raced); err != nil && c.sends > 0 {
				res.err = &jsonrpc.Error{Code: jsonrpc.CodeUpstream, Message: b.e.endedInBatch(c, err)}
			} else {
				c.p.resent = c.sends > 0
				res = b.e.execute(raced, c.req, c.p)
			}
			if armed {
				res = late.end(k, res)
			}
		}
		res.attempts += c.sends
		b.results[c.i] = b.e.finishOne(ctx, c.req, c.p, res, b.start)
	})
}

// endedInBatch says why c, a call whose upstream batches did not answer
// it, ended there (err: its context's), in the words a request's race
// uses (execution.timedOut).
func (e *Engine) endedInBatch(c batchCall, err error) string {
	if !errors.Is(err, context.DeadlineExceeded) {
		return "client went away"
	}
	why := e.timedOutWords(c.req.Method)
	if len(c.sentTo) > 0 {
		why += " (sent in an upstream batch to " + endpointNames(c.sentTo) + ")"
	}
	return why
}

// chunkIDs tells whether an id is already in an upstream batch being
// built, by value as jsonrpc.SameID compares them: each id is looked up by
// its canonical spelling, so a batch's ids cost their length, however
// they are spelt (compared pair by pair, 40 calls with ids such as
// 1e999999 held a core for 40 s).
type chunkIDs struct {
	size int // the most ids a chunk holds
	seen map[string]struct{}
}

func (c *chunkIDs) reset() { clear(c.seen) }

func (c *chunkIDs) add(id json.RawMessage) {
	if c.seen == nil {
		c.seen = make(map[string]struct{}, c.size) // grown from empty, it was rehashed at every doubling
	}
	c.seen[jsonrpc.CanonicalID(id)] = struct{}{}
}

func (c *chunkIDs) has(id json.RawMessage) bool {
	if jsonrpc.PlainID(id) {
		_, ok := c.seen[string(id)] // not copied to be looked up
		return ok
	}
	_, ok := c.seen[jsonrpc.CanonicalID(id)]
	return ok
}
