package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// serveOne executes one request element: it classifies the method, applies
// the stateful rules, runs the executor and accounts for the request.
func (e *Engine) serveOne(ctx context.Context, req *jsonrpc.Request, start time.Time, tr traceRef) result {
	cls := e.methods.Class(req.Method)
	if cls == jsonrpc.ClassWrite {
		var done func()
		ctx, done = e.detachFromClient(ctx)
		defer done()
	}
	req, p, early, ok := e.planOne(req, cls, start, tr, nil)
	if !ok {
		return early
	}
	p.preferFirm = cls == jsonrpc.ClassWrite && followsBatchWrite(ctx) // only a write yields (affinityYields)
	if cls == jsonrpc.ClassRead {
		e.hedge.deposit(p.weight, 1)
	}
	return e.finishOne(ctx, req, p, e.execute(ctx, req, p), start)
}

// planOne is the plan of a request of class cls, counted as a request of
// its method (the request it is to send: a pinned block, an endpoint's own
// filter id), or the answer it gets without one (ok false). A read's
// weight is the caller's to deposit in the hedge budget (the calls of an
// upstream batch deposit theirs at once). memo, when not nil, keeps the
// facts of the last method planned (factsOf).
func (e *Engine) planOne(req *jsonrpc.Request, cls jsonrpc.Class, start time.Time, tr traceRef, memo *methodFacts) (*jsonrpc.Request, plan, result, bool) {
	tr.setMethod(req.Method, cls)
	if pin := e.cfg.Chain.PinLevel(); pin != "" && (cls == jsonrpc.ClassRead || jsonrpc.PinsWrite(e.cfg.Chain.Kind, req.Method)) {
		if params, ok := jsonrpc.PinParams(e.cfg.Chain.Kind, pin, req.Method, req.Params); ok {
			if pinned, err := req.WithParams(params); err == nil {
				req = pinned
			}
		}
	}
	f := e.factsOf(req.Method, memo)
	// Tip-dependence is of what the read asks for once pinned (a parsed
	// request's params, valid JSON): the pinned level is as tip-dependent
	// as the absent tag it fills in (blockTagTip), so chain.pin never takes
	// a read out of lag protection.
	p := plan{
		method:    f.name,
		class:     cls,
		hedgeable: cls == jsonrpc.ClassRead && f.hedgeable && !req.IsNotification(), // an answer no one reads is worth no hedge
		tip:       e.methods.TipDependentValid(req.Method, req.Params),
		weight:    f.weight,
		acct:      f.acct,
		trace:     tr,
	}
	if cls == jsonrpc.ClassRead && e.cfg.Chain.Kind == "evm" {
		p.minHead = jsonrpc.RequiredHead(req.Method, req.Params)
		p.finality = jsonrpc.FinalityTag(req.Method, req.Params)
		if e.showsHead(req) {
			p.showsHead, p.readFloor = true, &e.latestFloor
		}
	}
	if cls == jsonrpc.ClassRead && e.cfg.Chain.Kind == "solana" {
		p.readFloor, p.readLead = e.contextFloors.of(contextCommitment(req))
	}
	p.prefer = e.affinityFor(req, cls, start)
	mc := p.acct

	if cls == jsonrpc.ClassStateful {
		creates, idParam, unsupported := e.methods.FilterRole(req.Method)
		p.creates = creates
		switch {
		case unsupported:
			return req, p, e.clientError(mc, tr, start, subscriptionError(req.Method, req.Params)), false
		case creates && !e.filters.hasRoom():
			return req, p, e.clientError(mc, tr, start, e.filters.fullError("")), false
		case idParam >= 0:
			id, ok := jsonrpc.StringParam(req.Params, idParam)
			if !ok {
				return req, p, e.clientError(mc, tr, start, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: params[%d] must be a filter id string", req.Method, idParam)}), false
			}
			ep, upstream, ok := e.filters.lookup(id)
			if !ok && req.Method == "eth_uninstallFilter" {
				// A node answers false for a filter it does not hold (expired,
				// uninstalled twice); clients uninstall when they stop
				// watching and take an error there for a failure. It counts
				// as the client error it is for rpcdash (a filter it does not
				// hold, as eth_getFilterChanges's below), so that the
				// requests less client_errors are those sent upstream.
				mc.clientErrors.Add(1)
				return req, p, e.localAnswer(tr, start, jsonrpc.AppendBoolResult(nil, req.ID, false)), false
			}
			if !ok {
				return req, p, e.clientError(mc, tr, start, &jsonrpc.Error{Code: jsonrpc.CodeFilterGone, Message: "filter not found: " + id + " was not created through rpcdash, was uninstalled or expired"}), false
			}
			// The endpoint knows the filter by its own id. (params[idParam]
			// is a string, read above: it can be replaced.)
			translated, _ := req.WithStringParam(idParam, upstream)
			req, p.pinned, p.filterID = translated, ep, id
		}
	}
	return req, p, result{}, true
}

// methodFacts are what planning a request looks up by its method's name
// alone.
type methodFacts struct {
	method    string // as requests name it
	name      string // its accounting label (methodNames.statsName)
	hedgeable bool
	weight    float64
	acct      *counts
}

// factsOf are method's facts: memo's when it holds method's, else looked up
// and, when memo is not nil, kept there (a batch's calls come in runs of
// one method: looked up call by call they were a quarter of planning them).
func (e *Engine) factsOf(method string, memo *methodFacts) methodFacts {
	if memo != nil && memo.acct != nil && memo.method == method {
		return *memo
	}
	name := e.names.statsName(method)
	f := methodFacts{method: method, name: name, hedgeable: e.methods.Hedgeable(method), weight: e.methods.Weight(method), acct: e.acct.method(name)}
	if memo != nil {
		*memo = f
	}
	return f
}

// finishOne accounts for res, what execute gave req, and applies what the
// answer says to the engine's state.
func (e *Engine) finishOne(ctx context.Context, req *jsonrpc.Request, p plan, res result, start time.Time) result {
	res = e.settle(ctx, req, p, res)
	took := e.now().Sub(start)
	e.traceTook(p, res, took)
	e.countRequests(p.acct.name, p.class, res.out, took, 1)
	e.countUpstream(p.acct, res.attempts)
	return res
}

// countUpstream counts a finished request's attempts (what its
// X-Rpcdash-Attempts says) in the console's last minute and its method's
// amplification, with the request rather than when each was sent: counted
// apart, the minute's edges cut a request's attempts from it, and amp read
// 0.79× with every request sent; a write in flight read 1.125×.
func (e *Engine) countUpstream(acct *counts, attempts int) {
	if attempts > 0 {
		e.recent.count(acct.name, window.Upstream, int64(attempts))
		acct.settledAttempts.Add(int64(attempts))
	}
}

// settle applies what res, the outcome of req, says to the engine's state
// (filters, writes, heads, finality) and gives the answer the client gets.
func (e *Engine) settle(ctx context.Context, req *jsonrpc.Request, p plan, res result) result {
	cls, mc := p.class, p.acct
	res.class = cls
	if res.err != nil {
		// Read off the context the request ran under: a write's is its own
		// (detachFromClient), which shutdown may cut before the server's.
		res.err = answerError(ctx, res)
	} else if cls == jsonrpc.ClassStateful {
		res = e.trackFilter(req, p.creates, p.filterID, res)
	} else if cls == jsonrpc.ClassWrite {
		e.noteWrite(req, res)
	} else if res.head > 0 {
		e.monotonicHead(req.Method, res.body, res.head, res.ep)
	} else if res.final > 0 {
		e.noteFinality(p.finality, res.final, res.ep)
	} else if res.readAt > 0 {
		e.noteReadAt(p.readFloor, p.readLead, res.readAt, res.ep)
		if res.ep != nil {
			res.ep.backAtFloor(p.method)
		}
	} else {
		e.monotonicSolana(req, &res)
	}
	res.out = outcomeOf(ctx, res)
	mc.ended(res.out)
	res.mirror = e.planMirror(req, p, res)
	return res
}

// traceTook records what one request's client waited, took, in its trace
// and, for a hedged read, against the hedging model's forecast.
func (e *Engine) traceTook(p plan, res result, took time.Duration) {
	if p.hedgeable && !res.unhedged && res.err == nil {
		// A read held to one endpoint was not a hedged one; rpcdash's own
		// error is no answer, whose latency the forecast predicts.
		e.trials.observe(p.method, took)
	}
	if tr := p.trace; tr.s != nil {
		code := 0
		if res.err != nil {
			code = res.err.Code
		}
		tr.finish(took, res, code)
	}
}

// countRequests counts n client requests of one method (its accounting
// label), class and outcome that took took each: in the metrics and the
// console's last minute.
func (e *Engine) countRequests(label string, cls jsonrpc.Class, out clientOutcome, took time.Duration, n int64) {
	e.metrics.requests(label, cls, out, took, n)
	e.recent.observe(label, took, out, n)
}

// requestSeries is what countRequests counts a request under, but its
// latency.
type requestSeries struct {
	label string
	cls   jsonrpc.Class
	out   clientOutcome
}

// localAnswer is an answer rpcdash gives without asking an endpoint.
func (e *Engine) localAnswer(tr traceRef, start time.Time, body []byte) result {
	res := result{body: getBuf()}
	res.body.Write(body)
	tr.finish(e.now().Sub(start), res, 0)
	return res
}

func (e *Engine) clientError(mc *counts, tr traceRef, start time.Time, err *jsonrpc.Error) result {
	mc.clientErrors.Add(1)
	tr.refuse(e.now().Sub(start), err.Code)
	return result{err: err}
}

// trackFilter pins a new filter to the endpoint that created it, answering
// the client with rpcdash's id for it, and forgets an uninstalled one.
func (e *Engine) trackFilter(req *jsonrpc.Request, creates bool, id string, res result) result {
	if res.info.HasError {
		return res
	}
	switch {
	case creates:
		upstream, ok := jsonrpc.ResultString(res.body.Bytes())
		if !ok || len(upstream) > maxUpstreamFilterID {
			putBuf(res.body)
			return result{err: &jsonrpc.Error{Code: jsonrpc.CodeUpstream, Message: fmt.Sprintf("endpoint %s answered %s without a filter id (a string of at most %d bytes)", res.ep.Name, req.Method, maxUpstreamFilterID)},
				attempts: res.attempts, hedged: res.hedged, class: res.class, leftTo: res.ep.Name}
		}
		mine, ok := e.filters.pin(res.ep, upstream)
		if !ok {
			putBuf(res.body)
			// It ran there (the node made a filter): a class and leftTo
			// say so, so that a batch beside a rate limit is not answered
			// 429 for the client to make it again (batchRateLimited).
			return result{err: e.filters.fullError(res.ep.Name), attempts: res.attempts, hedged: res.hedged, class: res.class, leftTo: res.ep.Name}
		}
		res.body.Reset()
		res.body.Write(jsonrpc.AppendStringResult(res.body.AvailableBuffer(), req.ID, mine))
	case req.Method == "eth_uninstallFilter" && id != "":
		e.filters.unpin(id)
	}
	return res
}
