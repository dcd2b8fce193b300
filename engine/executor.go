package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

var (
	errLost        = errors.New("another attempt won")
	errRequestDone = errors.New("request finished")
	errShutdown    = errors.New("engine shut down")
)

// result is what the executor hands back to the server for one request.
type result struct {
	body     *bytes.Buffer        // pooled winning answer, nil when err is set
	info     jsonrpc.ResponseInfo // what the transport read of body
	head     int64                // the head body is (eth_blockNumber, getSlot), 0 if none
	final    int64                // the number of the finalized or safe block body is (plan.finality), 0 if none
	readAt   int64                // the slot or latest block body was read at (plan.readFloor), 0 if none
	err      *jsonrpc.Error
	ep       *endpoint // who answered, nil when err is set
	attempts int
	hedged   bool
	took     time.Duration // the answering attempt's latency
	mirror   *mirrorJob    // the shadows to mirror this read to, once answered (shadow.go)
	// retryAfter > 0: err is a rate limit (every attempt was answered 429,
	// see failRateLimited), answered HTTP 429 with this Retry-After.
	retryAfter time.Duration
	// unhedged: a read that could not be hedged (a hedgeable method held
	// to one endpoint by a recent write, affinity.go).
	unhedged bool
	// class is the request's method class (serveOne). leftTo names, for a
	// request sent once (not a read) that failed, the endpoints it may have
	// reached ("" when it provably reached none): what a client is told
	// when shutdown cuts it (shuttingDownError).
	class  jsonrpc.Class
	leftTo string
	// notServed: an upstream batch's answer to the call was -32601, from
	// an endpoint without its method (takeElement): not relayed while
	// another endpoint may have it.
	notServed bool
	// out is how the client's request ended (settle: clientoutcome.go).
	out clientOutcome
}

// endpointName is who answered, "" when nobody did.
func (r result) endpointName() string {
	if r.ep == nil {
		return ""
	}
	return r.ep.Name
}

// attempt is one upstream send of a request.
type attempt struct {
	ep    *endpoint
	role  role
	trial bool
	stale bool // its endpoint's head is behind what the read needs (candidate.stale)
	start time.Time
	// exchanges: its endpoint's exchanges in flight when it was sent, its
	// own included (provenConcurrency).
	exchanges int64
	deadline  time.Duration
	// judgeAfter: when its silence is charged as a hang, if later than
	// deadline (a cold endpoint raced at a borrowed deadline); judged: that
	// verdict is given (borrowed_deadline.go).
	judgeAfter time.Duration
	judged     atomic.Bool
	cancel     context.CancelCauseFunc
	// cancelAt is when the request let go of the attempt (unix nanos): it
	// was cancelled, or kept running as a trial or a tail sample.
	cancelAt atomic.Int64
	// outranBy: how long the attempt that won took (nanos), when another
	// won (noteUnanswered).
	outranBy atomic.Int64
	stats    *methodStats // the endpoint's windows for this method
	// gate: whether a request sent once left for the endpoint (nil for a
	// read, which is taken to have).
	gate *sendGate
	// settled: the breaker has had this attempt's verdict (or release), so
	// whoever comes second — the end of the attempt or its deadline — gives
	// none.
	settled atomic.Bool
	// overdue: the attempt passed its deadline without an answer. charged:
	// that was counted against the breaker (not excused, see excuse).
	overdue atomic.Bool
	charged atomic.Bool
	excused atomic.Bool
	// passed: how many deadlines it has passed without its endpoint saying
	// anything, the latest due at dueAt (unix nanos; 0: its first, at
	// start + deadline) (silence.go). ended: it has ended, and no deadline
	// of it is judged any more.
	passed atomic.Int32
	dueAt  atomic.Int64
	ended  atomic.Bool
	// guessed: its deadline rests on no answers of its endpoint (cold).
	// paceKnown: when charged, the deadline was not guessed and the
	// endpoint had answered the method before: the method's own measure,
	// whose late answer does not end the run of failures (lateanswers.go).
	guessed   bool
	paceKnown atomic.Bool
	// slowTrial: a half-open trial that answered, slower than its
	// endpoint's pace allows (trial_deadline.go): a failed trial.
	slowTrial atomic.Bool
	// ownSlow: excused because rpcdash itself was the slow part. Its timing
	// is rpcdash's, not the endpoint's, and is not learned.
	ownSlow atomic.Bool
	// toVerdict: a read's half-open trial, which is not cancelled when
	// another attempt wins (see start). sampling: an overdue read kept
	// running after another attempt won, so its endpoint's deadline learns
	// how long its slow answers really take (see stopRest).
	toVerdict bool
	sampling  atomic.Bool
	// heldForSilence: a loser of an endpoint that has lost enough races
	// unanswered to look hung, kept running to its deadline so that its
	// silence gives the loss rule its verdict (concludeOutrun).
	heldForSilence atomic.Bool
	// explore: a hedge exploring a suspect endpoint (exploreHedge). When
	// another attempt wins it runs on to its answer or its deadline, so
	// that a recovered endpoint is heard even when it loses by a hair.
	explore bool
	// deferred: a read answered with the endpoint's own JSON-RPC error, or
	// over server.max_response_bytes; the breaker hears of it when the
	// request ends (execution.settleDeferred). failCause is why, or why a
	// slow trial failed.
	deferred  bool
	failCause string
	hangTimer *time.Timer
	hedgeDone func()
	traceIdx  int // its place in the request's trace, -1 when not traced
	// resent: the first attempt of a call sent again after its upstream
	// batch failed (plan.resent). It is routed as a primary, and counted
	// and traced as the failover it is (counted).
	resent bool
}

// counted is the role the attempt is counted and traced as: its own, but
// a failover for the first attempt of a call its upstream batch sent
// already (resent): that attempt is sent after one failed, and a primary
// is a request's first.
func (a *attempt) counted() role {
	if a.resent {
		return roleFailover
	}
	return a.role
}

type attemptDone struct {
	a    *attempt
	rep  upstreamReply
	took time.Duration // the attempt's latency (finishAttempt)
}

// plan is how one request may be executed.
type plan struct {
	method    string
	class     jsonrpc.Class
	hedgeable bool
	tip       bool
	pinned    *endpoint // stateful: the endpoint that holds the state
	// filterID: rpcdash's id of the filter a call names; creates: the call
	// creates a filter (trackFilter).
	filterID string
	creates  bool
	// prefer: the endpoint a recent write holds this request to first
	// (affinity.go); a read it takes is not hedged elsewhere. preferFirm:
	// a batch's write after its first, which follows prefer whatever its
	// pace (affinityYields).
	prefer     *endpoint
	preferFirm bool
	weight     float64
	minHead    int64 // the explicit block number the read names (0 = none)
	// finality: the tag of a read of the finalized or safe block ("" for
	// none), whose answers never go back (finality.go).
	finality string
	// readFloor: the floor of what a read's answers are read at, which
	// never goes back (a Solana context.slot at its commitment, an EVM
	// latest block's number; nil for none, readfloor.go); readLead: how
	// far its numbers run ahead of the heads.
	readFloor *readFloor
	readLead  int64
	// showsHead: the answer is its endpoint's head (an EVM latest block):
	// routed to the endpoints at the pool head first (latestblock.go).
	showsHead bool
	acct      *counts // the method's counters, looked up once per request
	trace     traceRef
	// resent: the call went out in an upstream batch that failed before
	// it runs on its own: its first attempt is counted as a failover
	// (attempt.counted).
	resent bool
}

// execute sends req upstream following p: attempts, failover, hedges.
// Every attempt goroutine is tracked by e.wg and does its own accounting.
func (e *Engine) execute(ctx context.Context, req *jsonrpc.Request, p plan) result {
	var order []candidate
	panicked := false
	if p.pinned != nil {
		// A drained endpoint still serves the filters it holds: their state
		// lives nowhere else. So does one whose breaker is open, asked past
		// it (tier 2: no verdict), unless it refuses connections: an open
		// breaker may follow a burst of errors the endpoint has healed
		// from, and a refused poll makes clients drop the filter and the
		// logs it holds.
		ok, trial := p.pinned.breaker.Routable()
		if ok && trial && e.probeTrials.Load() {
			ok = false // probes run the half-open trials
		}
		if !ok && p.pinned.refusing.Load() {
			return result{err: &jsonrpc.Error{Code: jsonrpc.CodeFilterGone, Message: fmt.Sprintf("filter lives on endpoint %s, which is refusing connections (breaker %s); create a new filter", p.pinned.Name, p.pinned.breaker.State())}}
		}
		c := candidate{ep: p.pinned, trial: trial}
		if !ok {
			c.tier, c.trial = 2, false
		}
		order = []candidate{c}
	} else {
		rk := e.rank(p.method, p.class, p.tip, p.showsHead, p.minHead, affinityPick{ep: p.prefer, firm: p.preferFirm}, false)
		if len(rk.order) == 0 {
			return result{err: noRouteError(e.rank(p.method, p.class, p.tip, p.showsHead, p.minHead, affinityPick{}, true))}
		}
		order = rk.order
		panicked = rk.panic
		if f := e.ranked.Load(); f != nil {
			(*f)()
		}
		if rk.preferred {
			// Another endpoint has not seen the write this read must see:
			// a hedge there would race a stale answer against the right one.
			p.hedgeable = false
		}
	}

	x := &execution{e: e, ctx: ctx, req: req, p: p, order: order, used: make([]bool, len(order)), panicked: panicked,
		done:    make(chan attemptDone, len(order)+1),
		overdue: make(chan *attempt, len(order)+1)}
	res := x.run()
	res.unhedged = p.class == jsonrpc.ClassRead && !p.hedgeable
	return res
}

// execution is the state of one request's race.
type execution struct {
	e     *Engine
	ctx   context.Context
	req   *jsonrpc.Request
	p     plan
	order []candidate
	used  []bool
	done  chan attemptDone
	// overdue carries the reads that passed their attempt deadline: each
	// starts the next attempt beside it (see run).
	overdue chan *attempt
	live    []*attempt
	sent    int
	hedges  int
	// explores: of hedges, the one exploring a suspect endpoint (0 or 1),
	// which takes nothing from hedge.max_extra.
	explores int
	// refusedSeen: the hedgeRefusal bits counted for the request so far.
	refusedSeen uint16
	// rateLimited counts the attempts answered 429, refused those that met
	// a refused connection (they reached no endpoint).
	rateLimited, refused int
	// panicked: the order goes past the routable endpoints (panic routing).
	panicked bool
	last     string // last failure cause, for the client's error
	// cut are the endpoints whose attempts the request's own deadline ended.
	cut []string
	// fallback is an answer set aside while another endpoint is asked (see
	// setAside). askedAgain: one was set aside for one more endpoint
	// (holdOnce), so the next such answer is relayed.
	fallback   *attemptDone
	askedAgain bool
	// errAnswer is the last JSON-RPC error answer that failed over (the
	// endpoint's error, or one it could not serve): relayed if no attempt
	// does better, as the client talking to that endpoint would have had it.
	errAnswer *attemptDone
	// deferred are the reads whose endpoints answered with their own
	// JSON-RPC error (settleDeferred).
	deferred []*attempt
	// left are the endpoints of the ended attempts of a request sent once
	// that may have reached them (upstreamReply.sent); see result.leftTo.
	left []string
	// retryOn is the first endpoint whose read attempt failed in a way a
	// second ask may not (transientFailure); retried: how many times it was
	// asked again (retryFailed). retryAt: when it may be asked again, its
	// last failure and the pause before the next ask (retryPauseOf), in real
	// time; counted: that failure was its own JSON-RPC error answer, asked
	// again a fixed number of times (mayRetry).
	retryOn *endpoint
	retried int
	retryAt time.Time
	counted bool
	// atOnce: retryOn was asked again at once beside a hang
	// (retryBeforeQuiet), which it is once a request.
	atOnce bool
	// waitedBackOff: the read, with nothing running, waited once for a
	// candidate's back-off to end (backOffWait).
	waitedBackOff bool
	// catchUps: how often an endpoint behind was asked again for a block
	// or slot it had not reached (catchup.go).
	catchUps int
}

// setAside holds an answer back while another endpoint is asked (an
// attempt still live, or a candidate left), to be relayed only if none does
// better. Held back are the answers a client of rpcdash must not get when
// another endpoint can do better, though a client of that endpoint alone
// would have had them:
//   - a null answer to a read of an explicit block number the pool expects
//     to exist (blockExpected), or an empty list ([], a log filter's
//     range) from an endpoint whose known head is below that block: this
//     endpoint may just not have the block yet. For the block after the
//     expected head (blockMaybeMade) one more endpoint is asked, no more:
//     the pool head is seen late, so it may exist, but a client polling
//     the next block must not cost one request per endpoint. A block
//     beyond that exists nowhere yet: its null is relayed as a direct
//     client gets it, without asking the pool again (indexers poll
//     head+1).
//   - an error saying the endpoint lacks the block asked for, from an
//     endpoint behind (notyet_error.go), or a Solana transaction's
//     blockhash (a preflight failure, isBlockhashValid false, a simulation's
//     BlockhashNotFound; solana_preflight.go).
//   - an answer showing its endpoint's head (answerHead: eth_blockNumber,
//     getSlot, the "latest" block) from an endpoint flagged ahead by this
//     very answer (headrule.go) or behind the pool head by more than
//     chain.max_head_lag (behindPool): the client would see the chain jump,
//     or go back. Its head was learnt all the same (finishAttempt).
//   - a finalized or safe block below one already returned (finality.go).
//   - an answer read at a slot below one another endpoint returned (a
//     Solana context.slot; readfloor.go), or a latest EVM block below one
//     another endpoint returned (latestblock.go).
//
// Of the answers held back, the one kept is the best (asideWorth). It says
// whether d was held back; x.fallback then holds the one to relay if the
// request runs out of endpoints to ask.
func (x *execution) setAside(d attemptDone) bool {
	switch x.e.heldBack(x.p, d.a.ep, &d.rep) {
	case holdNone:
		return false
	case holdOnce:
		if x.askedAgain {
			return false
		}
		x.askedAgain = true
	}
	if x.fallback != nil {
		if asideWorth(*x.fallback) > asideWorth(d) {
			putBuf(d.rep.body)
			return true
		}
		putBuf(x.fallback.rep.body)
	}
	f := d // a copy, so that d does not escape on every answer
	x.fallback = &f
	return true
}

// hold is whether an answer is held back while another endpoint is asked.
type hold int8

const (
	holdNone hold = iota
	holdAll       // while any endpoint is left to ask
	holdOnce      // while one more endpoint is asked (blockMaybeMade)
)

// heldBack says whether rep, ep's answer to a request planned as p, is
// one to hold back while another endpoint can do better (see setAside).
// An answer below a read floor marks ep's method so (belowFloorAt), for
// the router: here, where single calls and batch elements are judged.
func (e *Engine) heldBack(p plan, ep *endpoint, rep *upstreamReply) hold {
	badHead := rep.head != 0 && (ep.ahead.Load() || e.behindPool(rep.head))
	below := e.wentBelow(p.readFloor, p.readLead, ep, rep.readAt)
	if below {
		ep.stats(p.method).belowFloorAt.Store(e.now().UnixNano())
	}
	wentBack := p.finality != "" && e.finalityWentBack(p.finality, rep.final) || below
	if badHead || wentBack || rep.behind {
		return holdAll
	}
	if rep.nextBlock {
		return holdOnce
	}
	// An empty list is also the answer for a range with no logs: it is
	// suspect only from an endpoint not known to have the block.
	lacks := rep.info.ResultNull || rep.info.ResultEmptyList && ep.head.Load() < p.minHead
	switch {
	case p.minHead == 0 || !lacks:
		return holdNone
	case e.blockExpected(p.minHead):
		return holdAll
	case e.blockMaybeMade(p.minHead):
		return holdOnce
	}
	return holdNone
}

// asideWorth ranks answers set aside: a lagging head by its height, above
// a head from an endpoint flagged ahead (not the chain's head at all);
// between equals, the later answer.
func asideWorth(d attemptDone) int64 {
	if d.a.ep.ahead.Load() {
		return 0
	}
	return max(d.rep.head, d.rep.final, d.rep.readAt)
}

func (x *execution) run() result {
	e := x.e
	if !x.launch(rolePrimary, false) {
		return result{err: &jsonrpc.Error{Code: jsonrpc.CodeUpstream, Message: "no routable endpoint: every candidate refused the attempt"}}
	}
	var hedgeC <-chan time.Time
	var hedgeTimer *time.Timer
	var hedgeDue time.Time
	var delay delayInfo
	armHedge := func() {
		hedgeTimer.Reset(delay.Delay)
		hedgeC, hedgeDue = hedgeTimer.C, time.Now().Add(delay.Delay)
	}
	if x.mayHedge() {
		delay = e.hedge.delayFor(x.p.method)
		if delay.Enabled {
			x.p.trace.hedgeDelay(delay.Delay)
			x.exploreHedge()
			hedgeTimer = time.NewTimer(delay.Delay)
			hedgeC, hedgeDue = hedgeTimer.C, time.Now().Add(delay.Delay)
			defer hedgeTimer.Stop()
		}
	}
	// held are overdue reads whose race waits while rpcdash itself is the
	// slow part; heldTimer looks at them again a deadline later, the last
	// time before the request's deadline (heldrace.go).
	var held []*attempt
	var heldC <-chan time.Time
	var heldTimer lazyTimer
	defer heldTimer.stop()
	hold := func(a *attempt) {
		held = append(held, a)
		if heldC != nil {
			return
		}
		heldC = heldTimer.arm(x.holdFor(a))
	}
	// backOffC fires when a back-off that keeps an endpoint of this read
	// waiting ends while another attempt runs: the read is raced to it
	// then, not at the running attempt's deadline (backOffDue).
	var backOffC <-chan time.Time
	var backOffTimer lazyTimer
	// waitingBackOff: backOffC was armed with no attempt running, to ask
	// an endpoint whose back-off ends then (backOffWait).
	var waitingBackOff bool
	defer backOffTimer.stop()
	armBackOff := func() {
		due := x.backOffDue()
		if due.IsZero() || len(x.live) == 0 {
			return
		}
		backOffC = backOffTimer.arm(max(due.Sub(e.now()), 0))
	}
	// A candidate behind the primary may be backing off: if the primary
	// is not answering when the back-off ends, that one is raced then, not
	// at the primary's deadline (a hang's may be seconds).
	armBackOff()
	// catchUpC fires when an endpoint behind whose not-yet error is the
	// answer left has likely caught up (catchup.go).
	var catchUpC <-chan time.Time
	var catchUpTimer lazyTimer
	defer catchUpTimer.stop()
	awaitCatchUp := func() bool {
		d, ok := x.catchUpPause()
		if ok {
			catchUpC = catchUpTimer.arm(d)
		}
		return ok
	}
	race := func(a *attempt) {
		started, waiting := x.launchRace()
		if !started {
			if waiting {
				// Only a stale endpoint is left and a current one still
				// answers: looked at again a deadline later.
				hold(a)
				return
			}
			switch retried, later := x.retryFailed(); {
			case retried:
				e.noteFailover(a.ep, fmt.Sprintf("no answer within the attempt deadline %s and no endpoint left; asking again the one that failed", a.deadline.Round(time.Millisecond)), false)
				if hedgeC != nil {
					armHedge()
				}
			case later || x.backOffLeft():
				hold(a) // the one that failed, or one not asked yet, is backing off: a deadline later
			}
			return
		}
		e.noteFailover(a.ep, fmt.Sprintf("no answer within the attempt deadline %s; racing the next endpoint beside it", a.deadline.Round(time.Millisecond)), false)
		if hedgeC != nil {
			armHedge()
		}
	}
	for {
		select {
		case d := <-x.done:
			x.remove(d.a)
			x.offChain(&d)
			// A 429 (asksBackOff) turned it away unrun, though it is never
			// sent on elsewhere (mayFailOver).
			if d.rep.sent && x.p.class != jsonrpc.ClassRead && !x.notRun(d.rep) && d.rep.out != outRateLimit {
				x.left = append(x.left, d.a.ep.Name)
			}
			if d.rep.out != outAnswer && x.requestEnded() {
				// Ended by the request's deadline (or its client), not a
				// failure of the endpoint's own: the request's error says so.
				x.cut = append(x.cut, d.a.ep.Name)
				continue
			}
			if d.rep.out == outAnswer {
				if x.setAside(d) {
					if len(x.live) > 0 || x.launch(roleFailover, false) {
						// Beside attempts that hang, the answer set
						// aside is the answer (failBesideHangs).
						if res, ok := x.failBesideHangs(len(held) > 0, hold); ok {
							return res
						}
						continue
					}
					if awaitCatchUp() {
						continue
					}
					f := x.fallback
					x.fallback = nil
					return x.win(*f)
				}
				if x.fallback != nil {
					putBuf(x.fallback.rep.body)
					x.fallback = nil
				}
				return x.win(d)
			}
			if d.rep.out == outRateLimit {
				x.rateLimited++
			}
			if d.rep.refused {
				x.refused++
			}
			x.last = d.a.ep.Name + ": " + d.rep.cause
			if d.a.deferred {
				x.deferred = append(x.deferred, d.a)
			}
			if d.rep.out.errorAnswer() {
				if x.errAnswer != nil {
					putBuf(x.errAnswer.rep.body)
				}
				ea := d // a copy, so that d does not escape on every receive
				x.errAnswer = &ea
			}
			// An answer too big is the request's size: the same endpoint
			// would send it again, at the same cost to it.
			if x.retryOn == nil && x.p.class == jsonrpc.ClassRead && transientFailure(d.rep.out) && !d.rep.tooBig {
				x.retryOn = d.a.ep
			}
			if d.a.ep == x.retryOn {
				x.retryFailedAt(d.rep.out)
			}
			if x.mayFailOver(d) && (x.retryBeforeQuiet() || x.launch(roleFailover, false) || x.allOverdue() && x.retryNow(hold)) {
				e.noteFailover(d.a.ep, d.rep.cause, d.rep.out == outUnsupported)
				if hedgeC != nil {
					// The next hedge is a delay after the newest attempt.
					armHedge()
				}
				armBackOff()
				continue
			}
			if len(x.live) == 0 {
				if awaitCatchUp() {
					continue
				}
				// Nothing left to ask now but an endpoint backing off after
				// a 429 of its own (not this read's): ask the one that failed
				// again at once, else wait for that back-off's end if the
				// request has room for it (pastbackoff.go).
				if x.askAgainBesideBackOff() {
					e.noteFailover(d.a.ep, d.rep.cause+"; no other endpoint until a back-off ends: asking it again", false)
					continue
				}
				if wait, ok := x.backOffWait(); ok {
					backOffC, waitingBackOff = backOffTimer.arm(wait), true
					continue
				}
				return x.failedEverywhere()
			}
			// A failure beside attempts that run on (a 429 beside a hang)
			// may have started a back-off the read waits on.
			armBackOff()
			if res, ok := x.failBesideHangs(len(held) > 0, hold); ok {
				return res
			}
		case a := <-x.overdue:
			// Envoy's hedge on per-try timeout: the slow attempt keeps
			// running and the next candidate (of another failure domain
			// first) races it; the first success wins. With no candidate
			// left the attempt simply runs on to the request's deadline.
			// While rpcdash itself is the slow part (past its in-flight
			// limit, or stalled) the endpoint is not, and a race would add
			// work exactly when rpcdash cannot keep up: it waits.
			if !x.isLive(a) {
				continue
			}
			if a.ownSlow.Load() {
				hold(a)
				continue
			}
			race(a)
			if res, ok := x.failBesideHangs(len(held) > 0, hold); ok {
				return res
			}
		case <-backOffC:
			backOffC = nil
			if waitingBackOff {
				waitingBackOff = false
				if len(x.live) == 0 {
					// Nothing ran while the read waited for a back-off's end
					// (backOffWait): that endpoint now, or the failure.
					if x.launch(roleFailover, false) {
						e.noteFailover(x.live[0].ep, "a back-off is over: asking the endpoint that was backing off", false)
						continue
					}
					return x.failedEverywhere() // it waits once (backOffWait)
				}
			}
			if len(x.live) == 0 {
				continue
			}
			if retried, later := x.retryFailed(); retried {
				e.noteFailover(x.live[0].ep, x.retryWords(), false)
			} else if later || x.backOffLeft() || x.retryPending() {
				armBackOff()
			} else if x.last != "" || x.liveUnanswering(e.now()) {
				// Something failed, or the running attempts' endpoints are not
				// answering: otherwise their deadlines race as usual.
				if started, _ := x.launchRace(); started {
					e.noteFailover(x.live[0].ep, "no answer yet; a back-off is over: racing the next endpoint beside this attempt", false)
				}
			}
			// A pause may end with no time left for the ask (a late timer):
			// a read with nothing else to wait for ends now.
			if res, ok := x.failBesideHangs(len(held) > 0, hold); ok {
				return res
			}
		case <-heldC:
			heldC = nil
			waiting := held
			held = nil
			for _, a := range waiting {
				switch {
				case !x.isLive(a):
				case e.stillOverloaded(a) && !x.lastLook(a):
					hold(a)
				default:
					race(a)
				}
			}
			if res, ok := x.failBesideHangs(len(held) > 0, hold); ok {
				return res
			}
		case <-hedgeC:
			hedgeC = nil
			// A hedge timer that fires well after its time says rpcdash
			// itself stalled (a GC pause, a busy host), and so does a
			// wait rpcdash lost most of to its own slowness (lostMostOf: a
			// timer run first may fire on time in a starved process), and
			// so, for a delay learnt from the primaries' latency (auto: near
			// their p95), do goroutines that lately waited half of it for a
			// CPU (runQueue: busy, not stalled): answers may be waiting
			// unread, and a hedge now adds work exactly when rpcdash cannot
			// keep up. A delay set in config or live is the operator's, and
			// may be far below the answers' time (1 ms beside 40 ms ones).
			// It looks again a delay later.
			if late := time.Since(hedgeDue); late >= max(delay.Delay/2, stallSlack) || e.lostMostOf(delay.Delay+late) ||
				delay.Source == "auto" && e.lag.runQueue.busyFor(delay.Delay) {
				x.hedgeRefused(refusedLate)
				armHedge()
				continue
			}
			if x.rateLimited > 0 {
				x.hedgeRefused(refusedRateLimited)
			}
			if x.hedgesLeft() && x.rateLimited == 0 && len(x.live) > 0 && x.fireHedge() {
				x.noteHedgeLag(delay.Delay)
				if x.hedgesLeft() {
					armHedge()
				}
			}
		case <-catchUpC:
			catchUpC = nil
			if len(x.live) > 0 || x.catchUp() {
				continue
			}
			if res, ok := x.heldAnswer(); ok {
				return res
			}
			return x.fail(fmt.Sprintf("all %d attempts failed; last: %s", x.sent, x.last))
		case <-x.ctx.Done():
			why := "client went away"
			timedOut := errors.Is(x.ctx.Err(), context.DeadlineExceeded)
			if timedOut {
				// An answer set aside is still better than none.
				if res, ok := x.heldAnswer(); ok {
					return res
				}
				x.abandonUnsent()
				why = x.timedOut()
			}
			if x.last != "" {
				why += "; last failure: " + x.last
			}
			if timedOut {
				if res, ok := x.failedSentOnce(why); ok {
					return res
				}
			}
			return x.fail(why)
		}
	}
}

// failedEverywhere ends a request whose attempts all ended without an
// answer, with nothing left to ask or wait for.
func (x *execution) failedEverywhere() result {
	if res, ok := x.heldAnswer(); ok {
		return res
	}
	if x.rateLimited == x.sent || x.p.class == jsonrpc.ClassRead && x.rateLimited > 0 && x.rateLimited+x.refused == x.sent {
		// A read's refused connection reached no endpoint: the
		// endpoints that took it all said 429. (A write keeps
		// saying that no endpoint carried it out.)
		return x.failRateLimited()
	}
	why := fmt.Sprintf("all %d attempts failed; last: %s", x.sent, x.last)
	if res, ok := x.failedSentOnce(why); ok {
		return res
	}
	if x.p.class == jsonrpc.ClassWrite {
		// A write's error says what became of it, either way.
		why += "; no endpoint carried it out: it is safe to send again"
	}
	return x.fail(why)
}

// requestEnded: the request's deadline has passed or its client went away.
// A read's attempt has a deadline timer of its own at the same instant
// (start), which may fire first.
func (x *execution) requestEnded() bool {
	if x.ctx.Err() != nil {
		return true
	}
	dl, ok := x.ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// failedSentOnce fails a write (or a method in no table, sent once like
// one), or a filter call (stateful), that ended without an answer after it
// may have reached an endpoint (its deadline, a connection broken after it
// was sent, an HTTP error): that endpoint may have carried it out. It is
// answered as shutdown answers such a request cut (mayHaveRun,
// filterMayHaveRun), with jsonrpc.CodeMayHaveRun: -32603, a read's
// failure, is what viem retries on its own, and a write sent again may be
// carried out twice. why is the failure's words. false when the request
// is a read, or provably reached no endpoint (it is then safe to send
// again).
func (x *execution) failedSentOnce(why string) (result, bool) {
	if x.p.class == jsonrpc.ClassRead {
		return result{}, false
	}
	to := x.leftTo()
	if to == "" {
		return result{}, false
	}
	if x.p.class == jsonrpc.ClassStateful {
		return x.failWith(&jsonrpc.Error{Code: jsonrpc.CodeMayHaveRun, Message: why + "; it was " + filterMayHaveRun(to)}), true
	}
	return x.failWith(&jsonrpc.Error{Code: jsonrpc.CodeMayHaveRun, Message: why + x.panicNote() + "; it was " + mayHaveRun(to)}), true
}

// timedOut says that the request's deadline (requestTimeout) ended it, and
// which endpoints were still working on it: a client talking to one of them
// directly, with a longer timeout, might have had the answer.
func (x *execution) timedOut() string {
	why := x.e.timedOutWords(x.req.Method) // not the accounting name: "other" for a method in no table
	waited := slices.Clip(x.cut)
	var unsent []string
	for _, a := range x.live {
		if a.gate != nil && a.gate.abandoned() {
			unsent = append(unsent, a.ep.Name)
		} else {
			waited = append(waited, a.ep.Name)
		}
	}
	if len(waited) > 0 {
		why += " (" + endpointNames(waited) + " still working on it)"
	}
	if len(unsent) > 0 {
		why += " (no connection to " + endpointNames(unsent) + " yet: not sent there)"
	}
	return why
}

// abandonUnsent: the request is ending unanswered, and its attempts sent
// once whose body no connection has begun to carry never will be; they
// are then known not to have reached their endpoints (leftTo).
func (x *execution) abandonUnsent() {
	for _, a := range x.live {
		if a.gate != nil {
			a.gate.abandon()
		}
	}
}

// lazyTimer is a timer made on first use (most requests never need it) and
// reset after: arm starts it for d and returns its channel.
type lazyTimer struct{ t *time.Timer }

func (l *lazyTimer) arm(d time.Duration) <-chan time.Time {
	if l.t == nil {
		l.t = time.NewTimer(d)
	} else {
		l.t.Reset(d)
	}
	return l.t.C
}

func (l *lazyTimer) stop() {
	if l.t != nil {
		l.t.Stop()
	}
}
