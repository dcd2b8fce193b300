package engine

// An upstream batch's race: sent to the best endpoint for it and, when it
// has not answered by the batch hedge delay (batchDelay), sent again to
// the next endpoint, another failure domain first; the first to answer
// every call in order wins and the other is cancelled, as a single read's
// hedge. One that fails as a whole fails over once to the next endpoint,
// as a batch, before its calls run alone. One that has not answered by its
// own deadline (batchDeadline) is raced, as a batch, on the next endpoint
// while it runs on, as a single read's attempt is at its deadline; with no
// endpoint left, its calls run alone and it runs on beside them, to learn
// its round trip (the next batch's deadline) or find the endpoint hanging
// on batches. It was cut there: its round trip never learnt, each batch of
// a pool slower than its deadline was cut again, every call sent twice
// (a batch of 10 that the only endpoint, slowed by 1 s, answered in
// 1.04 s took 1.57 s with 21 calls upstream), and the endpoint then took
// no batch for breaker.cooldown. Without the hedge an upstream batch that met a heavy-tail endpoint's
// tail held its whole client batch there: 1000 eth_getBalance calls (ten
// upstream batches over three endpoints, one of them with 5 % of answers
// in 0.4–1.2 s) took up to 1182 ms where the same batch sent directly to
// one steady endpoint never took more than 74 ms.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// batchTry is one send of an upstream batch: its primary, its hedge or
// its failover.
type batchTry struct {
	ep     *endpoint
	role   role
	start  time.Time
	cancel context.CancelCauseFunc
	// attempt stands for the try in its calls' traces (traced[k] is call
	// k's index there, -1 for none); again, for a primary, in the traces of
	// the calls that went out in an upstream batch before (batchCall.sends:
	// a batch no endpoint took whole, sent again in smaller ones), for
	// which it is a failover (attempt.counted). nil when there are none.
	attempt *attempt
	again   *attempt
	traced  []int
	ended   bool // its end was received (sendWhole's loop)
	// own: its own deadline (start + batchDeadline on its endpoint), past
	// which, unanswered at the calls' deadline, it hung on the batch.
	own time.Time
}

// batchEnd is how a try ended: its answers, one per call sent in the
// order sent (nil unless it answered so), or what went wrong.
type batchEnd struct {
	t     *batchTry
	reply batchReply
	got   [][]byte
	end   time.Time
}

// batchRace is one upstream batch being sent.
type batchRace struct {
	e       *Engine
	calls   []batchCall // the calls it carries
	pos     []int       // each one's place among the calls sendWhole was given
	methods []string    // theirs, each once
	body    []byte
	n       int64
	// deadline: the calls' own, which ends every try (zero: none). A try's
	// own deadline (batchTry.own) only races the next endpoint.
	deadline time.Time
	limit    time.Duration // the slowest method's attempt deadline (batchDeadline)
	// unanswered: its calls are notifications, never hedged (plan): any
	// 2xx is their answer (postBatch).
	unanswered bool
	// once: its calls are of methods in no table, sent once (batchonce.go).
	once bool
	done chan batchEnd
	// late: where the try running on past its own deadline on its last
	// endpoint offers its answers to its calls gone alone (nil: none).
	late *lateAnswers
	// others: another endpoint may take the batch, to race it on.
	others bool
}

// sendWhole sends calls to the best endpoint for them as one upstream
// batch, hedged on another and failed over once to another when it fails
// as a whole (see the top of the file), and returns the
// answers the winner gave, a zero result for each call it did not answer
// well (for the caller to run alone), and the upstream sends each call
// had (0 when it went out in no batch), and the endpoints they went to.
//
// The endpoints are those of the ranking that are closed, undrained,
// without an injected fault, not a half-open trial and not refusing
// batches lately (noBatchUntil); a call whose method the first is backing
// off or cannot serve stays out of the batch, and the hedge goes only to
// an endpoint that can serve all the batch holds. An answer is taken only
// as the call's own race would take it (takeElement). The batch has a
// deadline of its own (batchDeadline): when it passes, the batch is raced
// on the next endpoint while it runs on; with none left and no race on,
// its calls run alone and the try runs on beside them (runOn), never cut.
// A race on waits for its first answer (a pool slowed by 1 s had its
// batch of 10 answered by its calls alone after 2.06 s, the batches
// running on answering at 1.04 s).
func (e *Engine) sendWhole(ctx context.Context, calls []batchCall, tried []*endpoint, late *lateAnswers) (answers []result, sends []int, to []string) {
	sends = make([]int, len(calls))
	eps, anyway, ok := e.batchEndpoints(calls, tried)
	if !ok {
		return nil, sends, nil
	}
	now := e.now()
	ep := eps[0]
	r := &batchRace{e: e, done: make(chan batchEnd, 4), pos: make([]int, 0, len(calls))}
	var limit time.Duration
	served := map[string]bool{} // by method: whether ep serves it now (its deadline counted in limit)
	for k, c := range calls {
		ok, seen := served[c.p.method]
		if !seen {
			if ok = batchServes(ep, c.p.method, now, e.cfg.Breaker.Cooldown) || anyway && ep.backoffEnd(c.p.method, now).IsZero(); ok {
				d, _ := e.attemptDeadline(ep, ep.stats(c.p.method))
				limit = max(limit, d)
				r.methods = append(r.methods, c.p.method)
			}
			served[c.p.method] = ok
		}
		if ok {
			r.pos = append(r.pos, k)
		}
	}
	r.calls = calls // all of them, as a rule: not copied
	if len(r.pos) < len(calls) {
		r.calls = make([]batchCall, len(r.pos))
		for j, k := range r.pos {
			r.calls[j] = calls[k]
		}
	}
	if len(r.calls) < 2 {
		return nil, sends, nil // alone after all: each race counts its own attempts
	}
	r.unanswered = r.calls[0].req.IsNotification() // one is as all are (serveWhole)
	parts := make([][]byte, len(r.calls))
	size := len(parts) + 1 // the brackets and commas
	for j, c := range r.calls {
		parts[j] = c.upstreamRaw()
		size += len(parts[j])
	}
	r.n = int64(len(r.calls))
	r.body = jsonrpc.AppendBatch(make([]byte, 0, size), parts)
	r.deadline, _ = ctx.Deadline() // a context's: the wall clock's, as the request's
	r.limit = limit
	r.others = len(eps) > 1

	tries := []*batchTry{r.launch(ctx, ep, rolePrimary, nil, r.ownDeadline(ep))}
	live := 1
	// The own deadline of the newest try still running: passing it races
	// the next endpoint, or with none left lets the calls go alone.
	var ownC <-chan time.Time
	var ownTimer lazyTimer
	defer ownTimer.stop()
	arm := func(t *batchTry) {
		if r.deadline.IsZero() || t.own.Before(r.deadline) {
			ownC = ownTimer.arm(max(time.Until(t.own), 0))
		}
	}
	arm(tries[0])
	add := func(t *batchTry) {
		tries = append(tries, t)
		live++
		arm(t)
	}
	var hedgeC <-chan time.Time
	var timer *time.Timer
	delay, hedging := r.hedgeDelay()
	if hedging && len(eps) > 1 {
		timer = time.NewTimer(delay)
		defer timer.Stop()
		hedgeC = timer.C
	}
	failedOver, overdue := false, false
	done := ctx.Done()
	var win *batchEnd
	for live > 0 && win == nil && !overdue {
		select {
		case end := <-r.done:
			live--
			end.t.ended = true
			r.offChain(&end)
			if end.got != nil {
				win = &end
				continue
			}
			r.failed(ctx, end)
			if live > 0 || failedOver || ctx.Err() != nil || !r.deadline.IsZero() && !time.Now().Before(r.deadline) {
				continue
			}
			failedOver = true
			if t := r.failover(ctx, eps, tries, end); t != nil {
				add(t)
				if hedgeC != nil {
					timer.Reset(delay) // the hedge is a delay after the newest try
				}
			}
		case <-ownC:
			ownC = nil
			if ctx.Err() != nil {
				continue
			}
			if t := r.raceOverdue(ctx, eps, tries); t != nil {
				add(t)
			} else if live == 1 {
				overdue = true // its last endpoint: the calls go alone beside it (runOn)
			} // else a race is on, each endpoint's batch running: the first answer wins
		case <-hedgeC:
			hedgeC = nil
			if t := r.hedge(ctx, eps, tries); t != nil {
				add(t)
			}
		case <-done:
			// The tries run apart from ctx (a primary outrun by its hedge may
			// run on, see letGo): its end ends them.
			done, hedgeC, ownC = nil, nil, nil
			for _, t := range tries {
				t.cancel(context.Cause(ctx))
			}
		}
	}
	for _, k := range r.pos {
		sends[k] = len(tries)
	}
	for _, t := range tries {
		to = append(to, t.ep.Name)
	}
	if win == nil {
		if live > 0 {
			if overdue && late != nil && !r.unanswered && !r.once {
				late.arm(len(calls))
				r.late = late
			}
			r.runOn(tries, live)
		}
		return nil, sends, to
	}
	r.letGo(win, tries, live)
	defer putBuf(win.reply.body)
	if b := budgetOf(ctx); b != nil && !b.charge(int64(win.reply.body.Len())) {
		r.ended(*win, func(int) outcome { return outCancelled }, nil, nil)
		return nil, sends, to // the batch is cut: its calls get -32003
	}
	answers = make([]result, len(calls))
	r.take(ctx, win, len(tries), answers)
	return answers, sends, to
}

// batchEndpoints are the endpoints an upstream batch of calls may go to,
// best first, none of tried (those that answered the calls -32601
// already); false when there are fewer than one, or the pool is in
// panic routing (each call's own race knows what to do then). When only
// endpoints that answered the first call's method -32601 lately are left,
// they are (anyway): as a single call asks them, one upstream batch asks
// each rather than each call asking every one.
func (e *Engine) batchEndpoints(calls []batchCall, tried []*endpoint) (eps []*endpoint, anyway, ok bool) {
	tip, showsHead, minHead := false, false, int64(0)
	for _, c := range calls {
		tip = tip || c.p.tip
		showsHead = showsHead || c.p.showsHead
		minHead = max(minHead, c.p.minHead)
	}
	now := e.now()
	rk := e.rank(calls[0].p.method, jsonrpc.ClassRead, tip, showsHead, minHead, affinityPick{}, false)
	if rk.panic {
		return nil, false, false
	}
	var cannot, quiet []*endpoint
	n := int64(len(calls))
	for _, c := range rk.order {
		if c.trial || c.tier != 0 || c.fallback {
			break // past the routable endpoints (or a trial first): each call's own race knows what to do
		}
		if slices.Contains(tried, c.ep) || !e.batchable(c.ep, n, now) {
			continue
		}
		switch {
		case c.cannotServe:
			cannot = append(cannot, c.ep)
		case c.silent:
			quiet = append(quiet, c.ep)
		default:
			eps = append(eps, c.ep)
		}
	}
	if len(eps) == 0 {
		// Every endpoint silent since its latest attempt, as in a slowdown
		// of the whole pool: the batch goes to them all the same, raced at
		// its deadline, rather than as its calls alone, a hundred at a
		// time, each waiting as long as the batch would (every endpoint
		// slowed to 4 s: 300 reads went alone, and the last hundred met
		// the request's 10 s deadline where the batch answered at 4 s).
		eps = quiet
	}
	if len(eps) == 0 {
		eps, anyway = cannot, true
	}
	e.orderByBatchPace(eps)
	return eps, anyway, len(eps) > 0
}

// batchable says whether ep may take an upstream batch of n calls now:
// its breaker closed, undrained, without an injected fault, not refusing
// batches lately (noBatchUntil), not running on a batch it lost
// (batchSampling) and taking that many (smallBatchesUntil). Asked when a batch's
// endpoints are ranked, and again of its hedge's when the delay has passed.
func (e *Engine) batchable(ep *endpoint, n int64, now time.Time) bool {
	return ep.breaker.State() == breaker.Closed && !ep.drained.Load() && !ep.batchSampling.Load() &&
		e.faultOf(ep) == nil && now.UnixNano() >= ep.noBatchUntil.Load() && (n <= batchFanout || now.UnixNano() >= ep.smallBatchesUntil.Load())
}

// batchServes says whether ep may carry calls of method in an upstream
// batch: it is not backing off the method and can serve it.
func batchServes(ep *endpoint, method string, now time.Time, cooldown time.Duration) bool {
	return ep.backoffEnd(method, now).IsZero() && !ep.stats(method).cannotServe(now, cooldown)
}

// hedgeDelay is when the batch is hedged, false when it is not: a call
// that may not be hedged (a method hedging is off for, one that is never
// hedged) keeps the whole batch unhedged.
func (r *batchRace) hedgeDelay() (time.Duration, bool) {
	if r.e.cfg.Hedge.MaxExtra == 0 || slices.ContainsFunc(r.calls, func(c batchCall) bool { return !c.p.hedgeable }) {
		return 0, false
	}
	return r.e.hedge.batchDelay(r.methods)
}

// weight is the hedge budget a copy of the batch costs: its calls'.
func (r *batchRace) weight() float64 {
	w := 0.0
	for _, c := range r.calls {
		w += c.p.weight
	}
	return w
}

// next is the best of eps for another try of the batch: not tried yet,
// able to take it now and to serve every call in it (eps were ranked a
// delay ago: one may have been drained, faulted, opened, found hung or
// taken out of routing since: stillRoutable), of another failure domain
// than the tries' when one is; one that shares a domain with them only
// when sameDomain allows. nil when none.
func (r *batchRace) next(eps []*endpoint, tries []*batchTry, sameDomain bool) *endpoint {
	e := r.e
	now := e.now()
	var pick *endpoint
	for _, ep := range eps {
		if slices.ContainsFunc(tries, func(t *batchTry) bool { return t.ep == ep }) ||
			!e.batchable(ep, r.n, now) || !r.stillRoutable(ep, now) || ep.silentNow(now, e.cfg.Breaker.Cooldown) || !r.servesAll(ep, now) {
			continue
		}
		if d := ep.Domain(); d == "" || !slices.ContainsFunc(tries, func(t *batchTry) bool { return t.ep.Domain() == d }) {
			return ep
		}
		if pick == nil && sameDomain {
			pick = ep
		}
	}
	return pick
}

// failover sends the batch to the next endpoint (next) when the tries so
// far failed as a whole, as a read fails over: before its calls run
// alone, a hundred requests where one would do.
func (r *batchRace) failover(ctx context.Context, eps []*endpoint, tries []*batchTry, after batchEnd) *batchTry {
	pick := r.next(eps, tries, true)
	if pick == nil {
		return nil
	}
	r.e.noteFailover(after.t.ep, "upstream batch: "+after.reply.cause(), false)
	return r.launch(ctx, pick, roleFailover, nil, r.ownDeadline(pick))
}

// raceOverdue sends the batch to the next endpoint (next, another failure
// domain first) when the newest try has not answered by its own deadline,
// as a failover beside the tries still running, as a single read's
// attempt deadline races the next candidate: the first to answer wins.
// nil when there is none, or when the calls' deadline comes before the
// next one's own (the calls then go alone): a batch raced there cannot be
// judged by its pace. An endpoint answering batches in 400 ms, raced at
// 500 ms under an 800 ms request deadline, timed out with every call.
func (r *batchRace) raceOverdue(ctx context.Context, eps []*endpoint, tries []*batchTry) *batchTry {
	pick := r.next(eps, tries, true)
	if pick == nil {
		return nil
	}
	own := r.ownDeadline(pick)
	if !r.deadline.IsZero() && !time.Now().Add(own).Before(r.deadline) {
		return nil
	}
	var late *batchTry // the oldest still running: the one overdue
	for _, t := range tries {
		if !t.ended {
			late = t
			break
		}
	}
	if late != nil {
		r.e.noteFailover(late.ep, fmt.Sprintf("upstream batch: no answer within its deadline %s; racing the next endpoint beside it", late.own.Sub(late.start).Round(time.Millisecond)), false)
	}
	return r.launch(ctx, pick, roleFailover, nil, own)
}

// hedge sends the batch to the next endpoint (next; one of a failure
// domain the batch is in already only if hedge.same_domain allows), if the
// hedging guard and budget allow; nil when it is not sent.
func (r *batchRace) hedge(ctx context.Context, eps []*endpoint, tries []*batchTry) *batchTry {
	e := r.e
	pick := r.next(eps, tries, e.cfg.Hedge.SameDomain)
	if pick == nil {
		return nil
	}
	w := r.weight()
	ok, release := e.hedge.tryFire(r.calls[0].p.method, w, int(r.n), e.inflight.Load())
	if !ok {
		return nil
	}
	t := r.launch(ctx, pick, roleHedge, release, r.ownDeadline(pick))
	// Counted once sent, as a single request's hedge is: a snapshot reads
	// the hedges fired before the attempts (counts.snapshot).
	pick.acct.hedgeFired(r.n, w) // one per call, as its attempts and the methods' hedges are
	for _, c := range r.calls {
		c.p.acct.hedgeFired(1, c.p.weight)
		e.recent.count(c.p.acct.name, window.Hedge, 1)
	}
	return t
}

func (r *batchRace) servesAll(ep *endpoint, now time.Time) bool {
	return !slices.ContainsFunc(r.methods, func(m string) bool { return !batchServes(ep, m, now, r.e.cfg.Breaker.Cooldown) })
}

// ownDeadline is a try's own deadline on ep (batchDeadline); none for a
// batch sent once.
func (r *batchRace) ownDeadline(ep *endpoint) time.Duration {
	if r.once {
		return 0
	}
	d := r.e.batchDeadline(ep, r.limit)
	if !r.deadline.IsZero() {
		// At most half the time the calls have left, as a single read's
		// race deadline: learnt from a pool slowed to 4 s, it was past the
		// request's 10 s deadline, and a batch that went to the one
		// endpoint that had hung was never raced: every call failed at
		// 10 s where the others answered in 4 s.
		d, _, _ = raceCeiling(d, d, "", time.Until(r.deadline), r.others)
	}
	return d
}

// launch sends the batch to ep in a goroutine of its own, which reports on
// r.done; own is the try's own deadline (ownDeadline), 0 for none.
func (r *batchRace) launch(ctx context.Context, ep *endpoint, role role, release func(), own time.Duration) *batchTry {
	e := r.e
	// Apart from ctx: the race cancels it when ctx ends, unless it runs on
	// (letGo). Its bytes are not charged to the batch's answer budget as
	// they are read: only the winner's are (take), so that a hedged batch
	// whose answers take over half the bound is not cut for answers read
	// twice. (Each try's answer is bounded on its own by
	// server.max_response_bytes.)
	detached := withoutAnswerBudget(context.WithoutCancel(ctx))
	var dctx context.Context
	var stop context.CancelFunc
	if r.deadline.IsZero() {
		dctx, stop = context.WithCancel(detached)
	} else {
		dctx, stop = context.WithDeadline(detached, r.deadline)
	}
	tctx, cancelCause := context.WithCancelCause(dctx)
	cancel := func(cause error) { cancelCause(cause); stop() }
	unlink := context.AfterFunc(e.base, func() { cancelCause(context.Cause(e.base)) }) // shutdown
	t := &batchTry{ep: ep, role: role, start: e.now(), cancel: cancel, traced: make([]int, len(r.calls))}
	if own > 0 {
		t.own = time.Now().Add(own) // a wall-clock time, as r.deadline
	}
	t.attempt = &attempt{ep: ep, role: role, start: t.start}
	var again int64
	for j, c := range r.calls {
		if role == rolePrimary && c.sends > 0 && t.again == nil {
			t.again = &attempt{ep: ep, role: role, start: t.start, resent: true}
		}
		a := t.attemptOf(c)
		if a.resent {
			again++
		}
		c.p.acct.attempts[a.counted()].Add(1)
		t.traced[j] = c.p.trace.attempt(e.trace, a)
	}
	ep.acct.attempts[role].Add(r.n - again)
	ep.acct.attempts[roleFailover].Add(again)
	ep.startAttempts(r.n, t.start)
	tracked := e.track(1)
	go func() {
		if tracked {
			defer e.wg.Done()
		}
		reply := e.postBatch(tctx, ep, r.body, r.unanswered, r.once)
		unlink()
		cancel(nil)
		end := batchEnd{t: t, reply: reply, end: e.now()}
		ep.endAttempts(r.n)
		if release != nil {
			release()
		}
		switch {
		case reply.body == nil:
		case r.unanswered:
			end.got = make([][]byte, len(r.calls)) // none to take: the 2xx answered each
		default:
			if end.got = jsonrpc.ArrayElements(reply.body.Bytes()); !inOrder(end.got, r.calls) {
				end.got = nil
				end.reply.out = outInvalid
			}
		}
		r.done <- end
	}()
	return t
}

// attemptOf is the attempt that stands for the try in c's trace and
// counts: again for a call sent in an upstream batch before.
func (t *batchTry) attemptOf(c batchCall) *attempt {
	if t.again != nil && c.sends > 0 {
		return t.again
	}
	return t.attempt
}

// offChain turns end, answers from an endpoint a probe has found on the
// wrong chain while the try ran, into a failure, as a single read's
// (execution.offChain): they are another chain's. The batch fails over as
// after any failure, to an endpoint still routable (stillRoutable).
func (r *batchRace) offChain(end *batchEnd) {
	if end.got == nil || r.unanswered || !end.t.ep.excluded(ExcludeWrongChain) {
		return
	}
	end.got = nil
	end.reply.out = outInvalid
	end.reply.offChain = true
}

// failed accounts for a try that did not answer: the endpoint's, unless
// the calls' own deadline came before the try's own (or their client, or
// the try's chain, ended it). A try that timed out at the calls' deadline
// past its own hung on the batch: batches are kept off its endpoint for a
// while (batchFailed), as for a batch that failed.
func (r *batchRace) failed(ctx context.Context, end batchEnd) {
	putBuf(end.reply.body)
	r.ended(end, func(int) outcome { return end.reply.out }, nil, nil)
	switch {
	case end.reply.offChain:
		return // its chain: not the endpoint's batches
	case end.hungOn():
		r.e.batchFailed(context.Background(), end.t.ep, r.n, end.reply, end.end) // the calls' deadline has ended ctx
	case end.reply.out == outTimeout:
		return // the calls' own deadline, before the try's: not the endpoint's
	default:
		r.e.batchFailed(ctx, end.t.ep, r.n, end.reply, end.end)
	}
}

// hungOn says whether end is its try's timeout at the calls' deadline past
// its own deadline: the endpoint hung on the batch.
func (end batchEnd) hungOn() bool { return end.reply.out == outTimeout && end.t.hung() }

// hung says whether a try that timed out at the calls' deadline ran past
// its own deadline first.
func (t *batchTry) hung() bool {
	return !t.own.IsZero() && !time.Now().Before(t.own)
}

// runOn lets the tries still running when the batch's calls went alone
// (no endpoint left to race at the newest try's deadline) run on to their
// end, one per endpoint at a time (batchSampling), as an outrun primary
// does (letGo): an answer teaches the endpoint's batch round trip, and so
// the next batch's deadline (batchDeadline); no answer by the calls'
// deadline finds the endpoint hanging on batches (batchFailed). Meanwhile
// no batch goes to the endpoint first. A second try on one endpoint is
// cancelled. Each is a loser for its calls, answered on their own.
func (r *batchRace) runOn(tries []*batchTry, live int) {
	r.letGoAll(tries, live, func(*batchTry) bool { return true })
}

// letGo lets go of the tries still running once win has answered. A
// primary its hedge outran runs on to its answer or its calls' deadline, one per
// endpoint at a time (batchSampling), as a single read's overdue loser
// does: its round trip is learnt as it is, and an endpoint hanging on
// batches is found out (batchFailed) rather than sent every batch and
// outrun each time; meanwhile no batch goes to it first. Any other loser
// is cancelled, and a primary's round trip learnt as censored.
func (r *batchRace) letGo(win *batchEnd, tries []*batchTry, live int) {
	e := r.e
	if win.t.role == rolePrimary {
		e.hedge.observeBatch(win.end.Sub(win.t.start), false)
	}
	win.t.ep.batchPace.Record(win.end.Sub(win.t.start))
	win.t.ep.series.answered(win.end, win.end.Sub(win.t.start))
	r.letGoAll(tries, live, func(t *batchTry) bool { return t.role == rolePrimary })
}

// letGoAll lets go of the live tries now (letGoAt), each running on when
// runOn says so, and awaits their ends (awaitLetGo). An ended one is the
// winner, or failed before it won: nothing to let go of.
func (r *batchRace) letGoAll(tries []*batchTry, live int, runOn func(*batchTry) bool) {
	cancelAt := r.e.now()
	for _, t := range tries {
		if !t.ended {
			t.letGoAt(cancelAt, runOn(t))
		}
	}
	if live > 0 {
		r.awaitLetGo(live, cancelAt)
	}
}

// awaitLetGo receives the ends of the live tries let go of at cancelAt
// (letGoAt) and accounts for each. One that ran on (sampling): its answer
// is learnt (its endpoint's batch pace, a primary's round trip for the
// batch hedge delay); no answer is its endpoint's failure (batchFailed),
// a timeout only when it ran past its own deadline (hung). One cancelled:
// slower than it ran (censored). Each is a loser for its calls.
func (r *batchRace) awaitLetGo(live int, cancelAt time.Time) {
	e := r.e
	tracked := e.track(1)
	go func() {
		if tracked {
			defer e.wg.Done()
		}
		for range live {
			end := <-r.done
			took := end.end.Sub(end.t.start)
			sampling := end.t.attempt.sampling.Load()
			var won []bool // by call: its answer was taken late (rescue)
			switch {
			case sampling && end.got != nil:
				if end.t.role == rolePrimary {
					e.hedge.observeBatch(took, false)
				}
				end.t.ep.batchPace.Record(took)
				end.t.ep.series.answered(end.end, took)
				end.t.ep.heard(end.end)
				if r.late != nil {
					won = r.rescue(end) // before its body is freed: end.got is in it
				}
			case sampling:
				if end.hungOn() || end.reply.out != outTimeout && end.reply.out != outCancelled {
					e.batchFailed(context.Background(), end.t.ep, r.n, end.reply, end.end)
				}
			default:
				if end.t.role == rolePrimary {
					e.hedge.observeBatch(cancelAt.Sub(end.t.start), true)
				}
				end.t.ep.batchPace.RecordCensored(cancelAt.Sub(end.t.start)) // cancelled: slower than that
				end.t.ep.series.ended(end.end)
			}
			putBuf(end.reply.body)
			out, cause := outCancelled, error(errLost)
			if sampling {
				end.t.ep.batchSampling.Store(false)
				out, cause = end.reply.out, nil
			}
			if !slices.Contains(won, true) {
				r.countLoser(end, cancelAt)
			}
			r.ended(end, func(int) outcome { return out }, cause, func(k int) bool { return won != nil && won[k] })
		}
	}()
}

// letGoAt lets go of t at cancelAt: it runs on (sampling) when runOn
// allows and no other try runs on on its endpoint (batchSampling), else it
// is cancelled.
func (t *batchTry) letGoAt(cancelAt time.Time, runOn bool) {
	t.attempt.cancelAt.Store(cancelAt.UnixNano())
	if t.again != nil {
		t.again.cancelAt.Store(cancelAt.UnixNano())
	}
	if runOn && t.ep.batchSampling.CompareAndSwap(false, true) {
		t.attempt.sampling.Store(true)
		if t.again != nil {
			t.again.sampling.Store(true)
		}
		return
	}
	t.cancel(errLost)
}

// countLoser counts a try that lost as its calls' lost attempts: the
// upstream time they used and how long the endpoint took to let go. The
// calls shared one upstream request: its time is counted once, each call
// taking its share, so that a losing batch of 50 that ran 400 ms is 400 ms
// of upstream time, not 20 s.
func (r *batchRace) countLoser(end batchEnd, cancelAt time.Time) {
	elapsed, release := end.end.Sub(end.t.start), end.end.Sub(cancelAt)
	share := elapsed / time.Duration(max(r.n, 1))
	for _, c := range r.calls {
		c.p.acct.lost(1, share, release)
	}
	end.t.ep.acct.lost(r.n, share, release)
	r.e.metrics.release.Observe(release.Seconds())
}

// take judges each answer of the winning try as the call's own attempt
// would be judged (takeElement) and puts those to relay in answers, at
// their calls' places among sendWhole's.
func (r *batchRace) take(ctx context.Context, win *batchEnd, tries int, answers []result) {
	e, ep := r.e, win.t.ep
	outs := make([]outcome, len(r.calls))
	took := win.end.Sub(win.t.start)
	success := newBatchSuccesses(ep)
	for k, c := range r.calls {
		part := win.got[k]
		res, out, ok := e.takeElement(ep, c, part, took)
		outs[k] = out
		if !ok {
			if b := budgetOf(ctx); b != nil {
				b.giveBack(int64(len(part))) // read again, alone (or counted when relayed, sendChunk)
			}
			if res.notServed {
				res.attempts = tries
				answers[r.pos[k]] = res
			}
			continue
		}
		res.attempts, res.hedged = tries, tries > 1
		answers[r.pos[k]] = res
		if win.t.role == roleHedge {
			c.p.acct.hedgesWon.Add(1)
			ep.acct.hedgesWon.Add(1)
			r.e.recent.count(c.p.acct.name, window.HedgeWon, 1)
		}
		success.add(c.p.method)
	}
	success.done()
	r.ended(*win, func(k int) outcome { return outs[k] }, nil, func(k int) bool { return answers[r.pos[k]].body != nil && !answers[r.pos[k]].notServed })
}

// batchSuccesses counts the answers taken from one upstream batch as its
// endpoint's successes: per method in runs of one method (runOf), then the
// endpoint's, and one success for its breaker.
type batchSuccesses struct {
	ep    *endpoint
	run   runOf[string]
	taken int64
}

func newBatchSuccesses(ep *endpoint) *batchSuccesses {
	return &batchSuccesses{ep: ep, run: runOf[string]{flush: func(method string, n int64) {
		st := ep.stats(method)
		st.rates.CountN(n, window.Attempts, window.Success)
		st.served()
	}}}
}

func (s *batchSuccesses) add(method string) {
	s.run.add(method)
	s.taken++
}

func (s *batchSuccesses) done() {
	s.run.done()
	if s.taken > 0 {
		s.ep.rates.CountN(s.taken, window.Attempts, window.Success)
		s.ep.breaker.Success(false)
	}
}

// ended ends the try's attempt in each call's trace and attempt metrics
// with out(k), marked won where won(k) says its answer was taken. The
// metrics are counted per method and outcome, not looked up per call.
func (r *batchRace) ended(end batchEnd, out func(k int) outcome, cause error, won func(k int) bool) {
	type series struct {
		label string
		role  role
		o     outcome
	}
	// Counted in runs of one series (runOf): a map looked up per call cost
	// more than the count.
	counted := runOf[series]{flush: func(s series, n int64) {
		r.e.metrics.attempt(end.t.ep.Name, s.label, s.role, s.o.String(), int(n))
	}}
	for k, c := range r.calls {
		o := out(k)
		a := end.t.attemptOf(c)
		counted.add(series{c.p.acct.name, a.counted(), o})
		i := end.t.traced[k]
		if i < 0 {
			continue
		}
		c.p.trace.endAttempt(i, a, upstreamReply{out: o, status: end.reply.status}, cause, end.end)
		if won != nil && won(k) {
			c.p.trace.won(i)
		}
	}
	counted.done()
}

// cutOutcome is how an upstream batch's exchange that was cut short
// ended: at its deadline, cancelled, or its connection failed.
func cutOutcome(ctx context.Context) outcome {
	switch {
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return outTimeout
	case ctx.Err() != nil:
		return outCancelled
	}
	return outConnError
}

// statusOutcome is how an upstream batch answered status failed: a 429
// (or 503 with a Retry-After, asksBackOff), another HTTP error, or a 200
// whose body is not its answers.
func statusOutcome(status int, retryAfter string) outcome {
	switch {
	case asksBackOff(status, retryAfter):
		return outRateLimit
	case status != http.StatusOK:
		return outHTTPError
	}
	return outInvalid
}
