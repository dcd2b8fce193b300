package engine

// Launching a request's attempts: whether a hedge or a failover may go,
// which candidate takes it, and starting it.

import (
	"context"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

func (x *execution) mayHedge() bool {
	e := x.e
	if !x.p.hedgeable || e.cfg.Hedge.MaxExtra == 0 {
		return false
	}
	n := 0
	for _, c := range x.order {
		if !c.fallback {
			n++
		}
	}
	return n > 1
}

// mayFailOver: reads move on after any failure; a write only when its
// endpoint provably did not run it (notRun).
func (x *execution) mayFailOver(d attemptDone) bool {
	if x.p.pinned != nil || d.rep.out == outCancelled {
		return false
	}
	if x.p.class == jsonrpc.ClassRead {
		return true
	}
	return x.notRun(d.rep)
}

// notRun says that the endpoint provably did not run the request: its
// connection never carried it, the endpoint said it sent nothing (a Solana
// node's -32005, solana_preflight.go), or it does not have the method
// (-32601: a node or provider answers so before running anything).
func (x *execution) notRun(rep upstreamReply) bool {
	return !rep.sent && rep.out == outConnError || x.e.unsentRefusal(x.req, &rep) ||
		rep.out == outUnsupported && rep.info.ErrCode == jsonrpc.CodeMethodNotFound
}

// hedgesLeft: hedge.max_extra allows the request another hedge.
func (x *execution) hedgesLeft() bool {
	return x.hedges-x.explores < x.e.cfg.Hedge.MaxExtra
}

func (x *execution) fireHedge() bool {
	e := x.e
	w := x.p.weight
	why, release := e.hedge.tryFireWhy(x.p.method, w, 1, e.inflight.Load())
	if why != hedgeSent {
		x.hedgeRefused(why)
		return false
	}
	ep := x.againAtHead(roleHedge, release)
	if ep == nil {
		ep = x.launchWith(roleHedge, true, release)
	}
	if ep == nil && e.cfg.Hedge.SameDomain {
		ep = x.relaunch(release)
	}
	if ep == nil {
		release()
		e.hedge.refund(w, 1)
		x.hedgeRefused(refusedNoEndpoint)
		return false
	}
	x.countHedge(ep, w)
	return true
}

// hedgeRefused records why a due hedge was not sent: in the request's
// trace, and in its method's count once per reason.
func (x *execution) hedgeRefused(why hedgeRefusal) {
	x.p.trace.hedgeRefused(why)
	if bit := uint16(1) << why; x.refusedSeen&bit == 0 {
		x.refusedSeen |= bit
		x.p.acct.refused[why].Add(1)
	}
}

func (x *execution) countHedge(ep *endpoint, w float64) {
	ep.acct.hedgeFired(1, w)
	x.hedges++
	x.p.acct.hedgeFired(1, w)
	x.e.recent.count(x.p.acct.name, window.Hedge, 1)
}

func (x *execution) launch(role role, otherDomain bool) bool {
	return x.launchWith(role, otherDomain, nil) != nil
}

// launchRace starts the race of an overdue attempt: a failover of another
// failure domain first, never to a stale candidate while a current
// endpoint answers (noStale). waiting says a stale candidate is left that
// may take the race later: one that still answers clients (launchAt turns
// away one drained, made a shadow or found on the wrong chain since).
// Counted, a stale candidate drained mid-read held the race a deadline at
// a time, and the endpoint that had failed was never asked again
// (retryFailed): the read waited out a slow one instead.
func (x *execution) launchRace() (started, waiting bool) {
	if x.raceOnlyToAnOpenHang() {
		return false, false
	}
	if x.againAtHead(roleFailover, nil) != nil || x.launchWith(roleFailover, true, nil) != nil {
		return true, false
	}
	for i, c := range x.order {
		if !x.used[i] && c.stale && c.ep.answersClients() {
			return false, true
		}
	}
	return false, false
}

// raceOnlyToAnOpenHang: the race would go to a failover-only candidate
// whose breaker is open and whose endpoint hangs (hangsNow: nothing heard
// from it for breaker.cooldown, or since an attempt of it passed its
// deadline), while an attempt still running is on an endpoint that does
// not. The race is then not sent: the attempt it would race still runs
// and may answer, the hung one is out of rotation and has given no sign
// it would, and a request to it is one more on an endpoint its breaker
// keeps out (on a loaded machine, the others passing their deadlines sent
// a hung endpoint 13 reads in 0.7 s past its open breaker). It stays the
// read's last failover once the attempts running fail or hang too, as
// retryBeforeQuiet has it.
func (x *execution) raceOnlyToAnOpenHang() bool {
	i := x.pick(true, true, len(x.live) > 0 && x.noStale())
	if i < 0 {
		return false
	}
	c := x.order[i]
	if !c.fallback || c.tier != 2 {
		return false
	}
	now := x.e.now()
	return x.e.hangsNow(c.ep, now) && !x.liveQuiet(now)
}

// launchWith starts an attempt on the best unused candidate (of another
// failure domain than the live attempts when otherDomain is set and one
// exists). A hedge, or a race beside a live attempt (otherDomain), goes
// to no stale candidate while a current endpoint answers.
func (x *execution) launchWith(role role, otherDomain bool, hedgeDone func()) *endpoint {
	onlyOther := role == roleHedge && !x.e.cfg.Hedge.SameDomain
	noStale := (role == roleHedge || otherDomain && len(x.live) > 0) && x.noStale()
	for {
		i := x.pick(otherDomain, role == roleFailover, noStale)
		if i < 0 && role == rolePrimary {
			// Every candidate rank put first turned the request away
			// since (turnedAway): the failover-only ones are all it has.
			i = x.pick(false, true, false)
		}
		if i >= 0 && (x.fellBehind(i) || x.outSince(i)) {
			continue
		}
		if i >= 0 && onlyOther && x.sharesDomain(x.order[i].ep) {
			return nil // hedge.same_domain = false: no hedge into shared fate
		}
		if i < 0 {
			return nil
		}
		if ep := x.launchAt(i, role, hedgeDone, false); ep != nil {
			return ep
		}
	}
}

// launchAt starts an attempt on candidate i, unless its breaker turns it
// away, or it answers no client now (drained, made a shadow or found on the
// wrong chain since the ranking, which would not list it; nil); either way
// the candidate is used.
func (x *execution) launchAt(i int, role role, hedgeDone func(), explore bool) *endpoint {
	x.used[i] = true
	c := x.order[i]
	var ok, trial bool
	if c.tier != 2 { // panic routing past an open breaker asks it nothing
		ok, trial = c.ep.breaker.Acquire()
	}
	if !ok && c.tier == 0 {
		x.turnedAway(i)
		return nil
	}
	if x.p.pinned == nil && !c.ep.answersClients() {
		if ok {
			c.ep.breaker.Release(trial)
		}
		return nil
	}
	a := &attempt{ep: c.ep, role: role, trial: trial, stale: c.stale, hedgeDone: hedgeDone, explore: explore}
	if !ok {
		a.settled.Store(true) // sent by panic routing: no verdict for the breaker
	}
	x.start(a)
	return c.ep
}

// relaunch starts a hedge once every candidate has had an attempt (hedge.
// max_extra as large as the pool): on the best-ranked routable endpoint
// still working on this request, the one with the fewest of its attempts
// live. A slow answer there says nothing against asking again, since the new
// attempt begins after what slowed the first; under an incident that slows
// the whole pool for a moment, it is what gets a request out of it. An
// endpoint whose attempt failed is not asked again, nor one that answers
// no client since the request was ranked (drained: a drain stops new
// traffic, the attempt it has finishes; made a shadow; found on the wrong
// chain), nor, while a current endpoint may answer, one whose answer
// would be old (behindAgain).
func (x *execution) relaunch(hedgeDone func()) *endpoint {
	return x.relaunchWhere(roleHedge, hedgeDone, nil)
}

// relaunchWhere is relaunch, as role, among the candidates such that
// where(c, n) (n: how many of its attempts are live), all when where is
// nil.
func (x *execution) relaunchWhere(role role, hedgeDone func(), where func(c candidate, n int) bool) *endpoint {
	best, fewest := -1, 0
	for i, c := range x.order {
		if c.tier != 0 || c.trial || c.fallback || !c.ep.answersClients() || x.behindAgain(c.ep) {
			continue
		}
		n := 0
		for _, a := range x.live {
			if a.ep == c.ep {
				n++
			}
		}
		if n > 0 && (best < 0 || n < fewest) && (where == nil || where(c, n)) {
			best, fewest = i, n
		}
	}
	if best < 0 {
		return nil
	}
	ep := x.order[best].ep
	if !x.startAgain(&attempt{ep: ep, role: role, hedgeDone: hedgeDone}) {
		return nil
	}
	return ep
}

// startAgain starts a, a second attempt of this request on an endpoint
// already asked, in its breaker's regular traffic: false, starting
// nothing, when the breaker takes none now or only a half-open trial (an
// endpoint asked again is no experiment).
func (x *execution) startAgain(a *attempt) bool {
	ok, trial := a.ep.breaker.Acquire()
	if !ok || trial {
		if ok {
			a.ep.breaker.Release(trial)
		}
		return false
	}
	x.start(a)
	return true
}

// pick is the best unused candidate: of the best tier left (routable
// endpoints before panic routing's others), of a failure domain no live
// attempt is in when otherDomain is set and one exists. Standbys kept as
// a fallback (candidate.fallback) are only for failover. After a 429 an
// endpoint backing off for the method is no candidate until its back-off
// is over (waitsBackOff, ratelimited.go).
//
// A failover (a deadline's race included) goes first to a candidate of
// that tier that is answering (not suspect, not quiet past its pace with
// work in flight: unanswering): the request already waited on one
// endpoint that did not answer. Two endpoints of three hung at the same
// moment made a read wait out both their deadlines (545 ms against 298 ms
// beside one hung endpoint) before the third, which answered throughout,
// was asked.
func (x *execution) pick(otherDomain, failover, noStale bool) int {
	if failover {
		if i := x.pickAmong(otherDomain, noStale, true, true); i >= 0 {
			return i
		}
	}
	return x.pickAmong(otherDomain, noStale, failover, false)
}

// pickAmong is pick, among the candidates that are not unanswering when
// answering is set.
func (x *execution) pickAmong(otherDomain, noStale, failover, answering bool) int {
	first, best := -1, -1
	var now time.Time
	if answering {
		now = x.e.now()
	}
	for i, c := range x.order {
		if x.used[i] || c.fallback && !failover || x.waitsBackOff(c) || c.stale && noStale ||
			x.notWorthAskingNow(c) {
			continue
		}
		if best < 0 {
			best = i
		}
		if c.tier != x.order[best].tier || c.fallback != x.order[best].fallback {
			break
		}
		if answering && c.ep.unanswering(now) {
			continue
		}
		if first < 0 {
			first = i
		}
		if !otherDomain || !x.sharesDomain(c.ep) {
			return i
		}
	}
	return first
}

// noStale: a live attempt is on a current endpoint that has not gone
// quiet (staleQuiet). Then a stale candidate takes no hedge and no race: a
// slow current answer is worth waiting for, an old one relayed as current
// is not. Once the current endpoints have been quiet that long, an old
// answer is the only one there is. An attempt whose endpoint has fallen
// behind the head since a read of the tip began is no current one
// (fellBehind): its answer is old too. Counted current, it kept the read
// waiting on it while it was heard (answering its probes), 6 s where a
// stale candidate raced at its deadline answered in 2.
func (x *execution) noStale() bool {
	now := x.e.now()
	for _, a := range x.live {
		if !a.stale && !(x.p.tip && a.ep.lagExcluded.Load()) && a.ep.silentFor(now) < staleQuiet(a.deadline) {
			return true
		}
	}
	return false
}

// staleQuiet is how long an endpoint with work in flight must have said
// nothing (silentFor) before a stale endpoint may answer in its place: the
// attempt's deadline, at least a second. Heard within the deadline alone
// was too short: an endpoint slowed to 800 ms past a 250 ms deadline says
// nothing for most of each deadline, and 12 of 60 reads of the pending
// block went to an endpoint 20 blocks behind. A hung one has said nothing
// for longer than that after its first second, and its reads race the
// stale endpoint at their deadline, as before.
func staleQuiet(deadline time.Duration) time.Duration {
	return max(deadline, time.Second)
}

func (x *execution) sharesDomain(ep *endpoint) bool {
	d := ep.Domain()
	if d == "" {
		return false
	}
	for _, a := range x.live {
		if !a.explore && a.ep.Domain() == d { // an exploring attempt covers no domain
			return true
		}
	}
	return false
}

func (x *execution) start(a *attempt) {
	e := x.e
	a.stats = a.ep.stats(x.p.method)
	var source string
	read := x.p.class == jsonrpc.ClassRead
	if read {
		a.deadline, a.judgeAfter, source = e.raceDeadline(a.ep, a.stats)
		a.deadline, a.judgeAfter, source = raceCeiling(a.deadline, a.judgeAfter, source, x.room(e.methodLimit(a.stats)), x.hasOtherCandidate())
	} else {
		a.deadline, source = e.attemptDeadline(a.ep, a.stats)
	}
	a.guessed = source == deadlineCold || source == deadlineBorrowed
	var actx context.Context
	var cancelDL context.CancelFunc
	unlink := func() bool { return false }
	if read {
		// A read is never cut at its own deadline (that starts the next
		// attempt beside it, see run), only by the request's deadline, a
		// win elsewhere or shutdown. Its context is the engine's, not the
		// request's, so that the execution decides what to cancel: a
		// half-open trial must reach a verdict and an overdue loser may be
		// kept as a tail sample after the request has been answered. It
		// keeps the request's values (a batch's shared answer bound).
		parent := context.WithoutCancel(x.ctx)
		if dl, ok := x.ctx.Deadline(); ok {
			parent, cancelDL = context.WithDeadline(parent, dl)
		}
		actx, a.cancel = context.WithCancelCause(parent)
		unlink = context.AfterFunc(e.base, func() { a.cancel(context.Cause(e.base)) })
		a.toVerdict = a.trial
	} else {
		// A write is never cut short: it may already be executing upstream.
		actx, a.cancel = context.WithCancelCause(x.ctx)
		a.gate = &sendGate{bounded: x.hasOtherCandidate()}
		actx = withSendGate(actx, a.gate)
	}
	a.start = e.now()
	a.resent = x.p.resent && a.role == rolePrimary
	a.traceIdx = x.p.trace.attempt(e.trace, a)
	// Past its deadline an attempt is counted against its endpoint (a hang
	// is a hang), and a read races the next candidate; each further
	// deadline it passes in silence is another (deadlinePassed).
	// The callback waits until the timer is stored: a deadline that passes
	// before AfterFunc returns (a tiny one, a stalled goroutine) read
	// a.hangTimer unset, a data race and a nil timer to Reset.
	stored := make(chan struct{})
	a.hangTimer = time.AfterFunc(a.deadline, func() { <-stored; e.deadlinePassed(a, x) })
	close(stored)
	if read {
		a.ep.lastRead.Store(a.start.UnixNano())
	}
	a.exchanges = a.ep.startAttempt(a.start)
	x.live = append(x.live, a)
	x.sent++
	x.p.acct.attempts[a.counted()].Add(1)
	a.ep.acct.attempts[a.counted()].Add(1)
	tracked := e.track(1)
	go func() {
		if tracked {
			defer e.wg.Done()
		}
		rep := e.roundTrip(actx, a.ep, x.req, read)
		unlink()
		if cancelDL != nil {
			cancelDL()
		}
		took := e.finishAttempt(a, x.p, rep, context.Cause(actx))
		a.cancel(nil)
		x.done <- attemptDone{a: a, rep: rep, took: took}
	}()
}

func (x *execution) isLive(a *attempt) bool {
	for _, l := range x.live {
		if l == a {
			return true
		}
	}
	return false
}

func (x *execution) remove(a *attempt) {
	for i, l := range x.live {
		if l == a {
			x.live = append(x.live[:i], x.live[i+1:]...)
			return
		}
	}
}
