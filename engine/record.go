package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// settle reports whether the caller is the one to give the breaker this
// attempt's verdict.
func (a *attempt) settle() bool { return a.settled.CompareAndSwap(false, true) }

// finishAttempt is where every attempt's ending is accounted for: breaker,
// windows, rates, hedge estimate, counters. cause is the attempt context's
// cancellation cause (nil when it ended on its own). It returns the
// attempt's latency (the answer's took: one clock read per attempt).
func (e *Engine) finishAttempt(a *attempt, p plan, rep upstreamReply, cause error) time.Duration {
	ep, ms := a.ep, a.stats
	end := e.now()
	p.trace.endAttempt(a.traceIdx, a, rep, cause, end)
	ep.endAttempts(1)
	a.ended.Store(true)
	a.hangTimer.Stop()
	if a.hedgeDone != nil {
		a.hedgeDone()
	}
	sampled := a.sampling.Load()
	if sampled {
		ep.sampling.Store(false)
	}
	elapsed := end.Sub(a.start)
	e.hedge.observeAttempt(rep.out)
	ep.noteRefused(&rep)
	if rep.out == outAnswer && a.overdue.Load() {
		ms.lateAnswers.Add(1)
		ep.lateAt.Store(end.UnixNano())
	}
	if a.excused.Load() {
		e.slow.observe(elapsed)
	}
	if a.role == roleHedge {
		ms.rates.Count(window.Hedge) // where this method's hedges go (the forecast's targets)
	}

	lost := errors.Is(cause, errLost) || sampled
	if lost || rep.out == outCancelled {
		// Not the endpoint's fault, unless it had already passed its
		// deadline without an answer.
		switch {
		case rep.out == outAnswer && sampled:
			e.answered(a, end)
		case a.overdue.Load() && rep.out != outAnswer:
			// Never answered within its deadline: a timeout in the rates
			// (the score steers away), excused or not (the breaker).
			e.countFailed(a, p.acct, outTimeout)
		default:
			ep.rates.Count(window.Attempts, window.Cancelled)
			ms.rates.Count(window.Attempts)
		}
		if a.settle() {
			ep.breaker.Release(a.trial)
		}
		switch {
		case rep.out == outAnswer:
			ep.series.answered(end, elapsed)
		case !a.overdue.Load(): // an overdue one was counted failed above
			ep.series.ended(end)
		}
		e.metrics.attempt(ep.Name, p.acct.name, a.role, "cancelled", 1)
		if lost {
			e.recordLoser(a, p, rep, elapsed, end)
		}
		return elapsed
	}

	e.metrics.attempt(ep.Name, p.acct.name, a.role, rep.out.String(), 1)
	switch rep.out {
	case outAnswer:
		e.recordAnswer(a, elapsed, end)
		if a.role == rolePrimary && !a.ownSlow.Load() {
			e.hedge.observePrimary(p.method, elapsed, false)
		}
		if rep.head > 0 {
			e.observeHead(ep, rep.head, false) // a passive answer's head counts too
		}
	case outRateLimit:
		e.recordRateLimit(a, p.method, rep, end)
	default:
		if rep.out.responded() {
			ep.heard(end)
		}
		ep.noAnswer(rep.out)
		switch {
		case rep.out == outUnsupported:
			// Another endpoint may serve it; this one is not at fault, but
			// goes after the others for this method for a while.
			ep.rates.Count(window.Attempts)
			ms.rates.Count(window.Attempts)
			ms.markCannotServe(end)
			if a.settle() {
				ep.breaker.Release(a.trial)
			}
		case (rep.out == outEndpointError || rep.tooBig) && p.class == jsonrpc.ClassRead && !a.trial && !a.settled.Load():
			e.countFailed(a, p.acct, rep.out)
			ep.setLastError(rep.cause, end)
			a.deferred, a.failCause = true, rep.cause
		case a.excused.Load() && (rep.out == outTimeout || rep.unreachable):
			// Overdue while the whole pool (or rpcdash) was slow, then cut
			// by the request's deadline or the dial timeout: still not the
			// endpoint's fault.
			ep.rates.Count(window.Attempts, window.Timeout)
			ms.rates.Count(window.Attempts, window.Timeout)
			if a.settle() {
				ep.breaker.Release(a.trial)
			}
		case a.settle():
			e.countFailure(a, p.acct, rep)
		default: // its verdict was given when its deadline passed
			e.countFailed(a, p.acct, rep.failure())
			ep.setLastError(rep.cause, end) // how it ended says more than that it was late
		}
	}
	return elapsed
}

// attemptOverdue runs when an attempt passes its deadline without an
// answer. A hang is a hang: the endpoint is charged now, not when (if ever)
// the attempt ends — unless the slowness is the whole pool's or rpcdash's
// own (excuse). A read also races the next candidate (execution.run); it is
// not cut.
func (e *Engine) attemptOverdue(a *attempt, x *execution) {
	if !a.overdue.CompareAndSwap(false, true) {
		return
	}
	now := e.now()
	a.passed.Store(1)
	a.stats.overdue.Add(1)
	e.hedge.observeOverdue()
	a.ep.overdueAt.Store(now.UnixNano())
	a.ep.suspect.Store(true)
	judge := !a.awaitsJudgement() // a borrowed deadline races now, is judged later (judgeBorrowed)
	excused := false
	if judge {
		excused = e.excusedHang(a, now)
	} else {
		kind, _ := e.selfSlow(a, now) // only whether to hold the race: no verdict, nothing noted yet
		a.ownSlow.Store(kind == "self")
		if kind != "self" && now.Sub(time.Unix(0, a.ep.heardAt.Load())) >= a.deadline {
			// No verdict yet, as for an excused hang: ranked after the
			// endpoints that answer until it answers, not sent first reads
			// to wait out the cold deadline.
			a.ep.silentAt.Store(now.UnixNano())
		}
	}
	if x.p.class == jsonrpc.ClassRead {
		select {
		case x.overdue <- a:
		default:
		}
	}
	if judge && !excused && a.settle() {
		e.chargeOverdue(a, a.deadline, now)
	}
	if judge {
		e.letGoOnceJudged(a, now)
	}
}

// chargeOverdue charges a, unanswered past its deadline d, as a hang, and
// draws what follows from the charge (concludeOutrun, exploreAfterCharge).
// Under a.settle.
func (e *Engine) chargeOverdue(a *attempt, d time.Duration, now time.Time) {
	a.chargeHang(fmt.Sprintf("no answer within the attempt deadline %s", d.Round(time.Millisecond)), now)
	e.concludeOutrun(a, now)
	e.exploreAfterCharge(a.ep)
}

// letGoOnceJudged cuts, once its deadline's verdict is given, an attempt
// kept running only for that verdict.
func (e *Engine) letGoOnceJudged(a *attempt, now time.Time) {
	if (a.explore || a.heldForSilence.Load()) && a.cancelAt.Load() != 0 {
		// An exploratory hedge, or a loser held for its silence, that the
		// request has let go of runs on only to its deadline (stopRest),
		// and is cut once judged: cut first, it ended and settled as a
		// loser before the charge its deadline called for. It is let go
		// now: its release time and what it says of the latency (censored
		// at the deadline) count from here, not from the race it lost.
		a.cancelAt.Store(now.UnixNano())
		a.cancel(errLost)
	}
}

// excusedHang says whether a's hang at now is not its endpoint's fault
// (excuse), and marks a so: its breaker hears nothing of it. The endpoint is
// silent only when nothing of it was heard for the attempt's whole deadline
// (one heavy call overdue everywhere says nothing of the endpoints' other
// answers), and never for rpcdash's own slowness.
func (e *Engine) excusedHang(a *attempt, now time.Time) bool {
	kind := e.excuse(a, now)
	a.ownSlow.Store(kind == "self")
	switch kind {
	case "hung":
		// Charged, and ranked last at once as when excused: another
		// endpoint hung beside it may keep its breaker from opening
		// (breaker.max_open_share).
		a.ep.silentAt.Store(now.UnixNano())
		return false
	case "":
		return false
	}
	a.excused.Store(true)
	if kind != "self" && now.Sub(time.Unix(0, a.ep.heardAt.Load())) >= a.judgeDeadline() {
		a.ep.silentAt.Store(now.UnixNano())
	}
	return true
}

// chargeHang gives a's breaker its verdict at a's deadline, now: a hang
// (a client attempt's or a probe's). Under a.settle.
func (a *attempt) chargeHang(msg string, now time.Time) {
	a.paceKnown.Store(!a.guessed && a.stats.latency.Count() > 0)
	a.charged.Store(true)
	a.ep.setLastError(msg, now)
	a.ep.hangAt.Store(now.UnixNano())
	closed := a.ep.breaker.State() == breaker.Closed
	a.ep.breaker.Failure(a.trial, msg)
	if closed && a.ep.breaker.State() == breaker.Open {
		a.ep.hangOpenedAt.Store(now.UnixNano()) // for forgive
	}
	a.ep.markSilentIfCapRefused(now)
}

// answered feeds the endpoint's state with an answer (client attempt or
// probe): it is not silent, and a late answer to an attempt charged as a
// hang at its deadline is healthy evidence.
func (e *Engine) answered(a *attempt, end time.Time) {
	ep := a.ep
	ep.heard(end)
	ep.rates.Count(window.Attempts, window.Success)
	a.stats.rates.Count(window.Attempts, window.Success)
	a.stats.served()
	if a.settle() {
		if a.slowTrial.Load() {
			ep.setLastError("trial "+a.failCause, end)
			ep.breaker.Failure(true, a.failCause)
		} else {
			ep.breaker.Success(a.trial)
		}
	} else if a.charged.Load() && !a.trial && !a.paceKnown.Load() {
		// Slow, not hung, past a deadline that was a guess: the run of
		// failures in a row is over (lateanswers.go).
		ep.breaker.Success(false)
	}
	ep.backOffSucceeded(a.stats)
}

// recordAnswer feeds an answer into the endpoint's latency windows and
// state (answered).
func (e *Engine) recordAnswer(a *attempt, elapsed time.Duration, end time.Time) {
	if !a.ownSlow.Load() {
		e.learnLatency(a, elapsed)
		a.ep.answers.add(a.stats.method, a.start, elapsed)
	}
	a.ep.series.answered(end, elapsed)
	e.answered(a, end)
}

// recordRateLimit backs off after a 429: the pair (endpoint, method) after
// a client attempt's, the whole endpoint after a probe's (method "") or
// when another method of it is backing off too (see backoff.go).
func (e *Engine) recordRateLimit(a *attempt, method string, rep upstreamReply, end time.Time) {
	ep, ms := a.ep, a.stats
	ep.heard(end)
	ep.rates.Count(window.Attempts, window.RateLimited)
	ms.rates.Count(window.Attempts, window.RateLimited)
	ep.series.failed(end)
	if a.settle() {
		ep.breaker.Release(a.trial)
	}
	base, limit := e.cfg.Breaker.BackoffBase, e.cfg.Breaker.BackoffMax
	var b backoff
	if method == "" {
		b = ep.backOffWhole(end, rep.retryAfter, base, limit)
	} else {
		b = ep.backOffMethod(end, ms, method, rep.retryAfter, base, limit)
	}
	last := "HTTP 429"
	if method != "" {
		last += " on " + method
	}
	ep.setLastError(last, end)
	if !b.running {
		e.events.add(Event{Type: EventBackoff, Endpoint: ep.Name, Message: b.message(method)})
	}
}

// recordLoser accounts for an attempt the request let go of because another
// won: what it tells about latency (exact if it answered, else only "more
// than it ran"), the upstream time it used and how long it took to let go.
// A tail sample (sampling) ran on until it ended.
func (e *Engine) recordLoser(a *attempt, p plan, rep upstreamReply, elapsed time.Duration, end time.Time) {
	ep, ms := a.ep, a.stats
	letGo := time.Unix(0, a.cancelAt.Load())
	ran := letGo.Sub(a.start)
	if a.sampling.Load() {
		ran = elapsed
	}
	learn := !a.ownSlow.Load() // rpcdash's own stall says nothing of the endpoint
	if rep.out.responded() {
		ep.heard(end) // it answered, only too late to win
	}
	switch {
	case rep.out == outAnswer:
		ms.served()
		if learn {
			e.learnLatency(a, elapsed)
		}
	default:
		if !a.overdue.Load() && e.noteUnanswered(a, end) { // an overdue one was charged at its deadline
			p.acct.outrunUnanswered.Add(1)
		}
		if ran > 0 && learn {
			ms.latency.RecordCensored(ran)
			ep.latency.RecordCensored(ran)
			if leftBehind(a, ran) {
				ep.suspect.Store(true)
			}
		}
	}
	if a.role == rolePrimary && learn {
		if rep.out == outAnswer {
			e.hedge.observePrimary(p.method, elapsed, false)
		} else {
			e.hedge.observePrimary(p.method, ran, true)
		}
	}
	release := end.Sub(letGo)
	p.acct.lost(1, elapsed, release)
	ep.acct.lost(1, elapsed, release)
	e.metrics.release.Observe(release.Seconds())
}

// countFailure charges a failed attempt to its endpoint (and to the method's
// counters when it was a client attempt, mc != nil). A refused connection
// is hard evidence, which no cap on open breakers holds back; an
// unreachable one (no answer to the connection attempt) is not: a local
// network problem silences every endpoint, as a pool-wide slowdown does.
func (e *Engine) countFailure(a *attempt, mc *counts, rep upstreamReply) {
	e.countFailed(a, mc, rep.failure())
	a.ep.setLastError(rep.cause, e.now())
	if rep.refused {
		a.ep.breaker.HardFailure(a.trial, rep.cause)
		return
	}
	a.ep.breaker.Failure(a.trial, rep.cause)
}

// failure is how a failed reply counts in the rates: a connection attempt
// that got no answer is a timeout (a connect timeout).
func (r *upstreamReply) failure() outcome {
	if r.unreachable {
		return outTimeout
	}
	return r.out
}

// countFailed counts a failed attempt in the rates and counters, without a
// breaker verdict.
func (e *Engine) countFailed(a *attempt, mc *counts, out outcome) {
	ep, ms := a.ep, a.stats
	if out == outTimeout {
		ep.rates.Count(window.Attempts, window.Failure, window.Timeout)
		ms.rates.Count(window.Attempts, window.Failure, window.Timeout)
	} else {
		ep.rates.Count(window.Attempts, window.Failure)
		ms.rates.Count(window.Attempts, window.Failure)
	}
	ep.acct.failures.Add(1)
	ep.series.failed(e.now())
	if mc != nil {
		mc.failures.Add(1)
	}
}

func (e *Engine) onBreakerTransition(ep *endpoint, t breaker.Transition) {
	if t.To == breaker.Closed {
		e.releaseOpen(ep)
		ep.refusing.Store(false)
	}
	if t.To == breaker.Open {
		ep.probes.giveUpAfter(t.At.Add(t.Cooldown).Sub(e.now()))
	}
	msg := t.Reason
	switch {
	case t.To == breaker.Open && t.Flap > 0:
		msg = fmt.Sprintf("%s; flapping: open again %s after it closed, cooldown %s (the last one doubled, at most breaker.max_cooldown)", t.Reason, roundShown(t.Flap), t.Cooldown)
	case t.To == breaker.Open:
		msg = fmt.Sprintf("%s; cooldown %s", t.Reason, t.Cooldown)
	}
	e.events.add(Event{Type: EventBreaker, Endpoint: ep.Name, From: t.From.String(), To: t.To.String(), Message: msg, Time: t.At})
	e.log.Info("breaker", "endpoint", ep.Name, "from", t.From.String(), "to", t.To.String(), "reason", msg)
}

// noteUnanswered watches for the hang that hedging hides. One loser says
// nothing about its endpoint and counts as no failure; but an endpoint whose
// every attempt is outrun by hedges without ever answering is not slow, it
// is silent, and without this its breaker would never hear of it (each hedge
// wins before the attempt deadline). 2 × breaker.failures unanswered losses
// in a row, with no answer of any kind between them and none for at least
// the attempt deadline, trip the breaker. The silence matters as much as the
// count: a healthy endpoint that stalls for a few milliseconds under many
// concurrent requests loses a dozen races at once, then answers again. Nor
// does a loss to an attempt that was given more time count: the attempt
// was not silent for longer than the winner took, so it says nothing of its
// endpoint (a hedge sent later that loses to the primary it raced, in a
// slowdown of the whole pool: counted, it opened the breaker of the
// endpoint that got mostly hedges). A loss by less than the loser's usual
// pace for the method is a tie: started (nearly) together, at a hedge delay
// of 0 or 1 ms, a healthy endpoint slower than the winner loses so every
// time, as a hung one does. A streak of ties alone never trips the breaker
// here, nor at the held loser's deadline (concludeOutrun): its losers run
// on to their deadlines, where passing unanswered is charged as any hang
// and breaker.failures of them in a row open it; an answer ends the streak.
// Counted as losses, ties opened the breaker of the shipped config's
// heavy-tail endpoint ("6 attempts in a row outrun by hedges ...: endpoint
// looks hung") whenever a held loser fell in its tail. It says whether the
// loss counted (the status's outrun_unanswered).
func (e *Engine) noteUnanswered(a *attempt, end time.Time) bool {
	ep := a.ep
	ran, w := time.Unix(0, a.cancelAt.Load()).Sub(a.start), time.Duration(a.outranBy.Load())
	if w > 0 && ran <= w {
		return false
	}
	tie := w > 0 && ran <= w+ep.paceMargin(a.stats)
	ep.acct.outrunUnanswered.Add(1)
	n := ep.unanswered.Add(1)
	if n == 1 {
		ep.outrunByTies.Store(tie)
	} else if !tie {
		ep.outrunByTies.Store(false)
	}
	if n < e.outrunLimit() {
		return true
	}
	if ep.outrunByTies.Load() || end.Sub(time.Unix(0, ep.heardAt.Load())) < a.judgeDeadline() {
		e.exploreOutrun(ep, n)
		return true
	}
	if kind, _ := e.overloaded(ep, end.Sub(time.Unix(0, ep.heardAt.Load())), a.deadline/2, 0); kind != "" {
		e.exploreOutrun(ep, n) // rpcdash, not the endpoint, may be the slow part
		return true
	}
	ep.unanswered.Store(0)
	ep.suspect.Store(true)
	ep.setLastError("no answer to its last attempts (outrun by hedges): looks hung", e.now())
	ep.breaker.Trip(fmt.Sprintf("%d attempts in a row outrun by hedges and no answer for %s: endpoint looks hung", n, end.Sub(time.Unix(0, ep.heardAt.Load())).Round(time.Millisecond)))
	ep.markSilentIfCapRefused(end)
	return true
}

// paceMargin is how much longer than the winner a loser of ep must have run
// for its loss to say silence rather than a slower pace, not a tie
// (noteUnanswered): ep's usual pace for the method, 0 while it has too few
// answers to know.
func (ep *endpoint) paceMargin(ms *methodStats) time.Duration {
	if pace, _, _, ok := ep.usualLatency(ms); ok {
		return pace
	}
	return 0
}

// outrunLimit is how many unanswered losses in a row make an endpoint look
// hung (noteUnanswered).
func (e *Engine) outrunLimit() int64 { return int64(2 * e.cfg.Breaker.Failures) }

// exploreOutrun is what an endpoint gets when it has lost enough races
// unanswered but its silence does not yet say it is hung (too short, or
// rpcdash stalled within it): its losses leave it ranked behind the others,
// so the next loss that would conclude may not come for
// router.explore_after, and meanwhile its breaker stayed closed beside a
// hang (a CI run: no trip in the 6 s after a hang, one stall excusing the
// loss that would have tripped it). It is suspect, and due for exploration
// at once: the next read hedges to it at once, and that hedge runs on to its
// attempt deadline (stopRest), where attemptOverdue judges its silence by
// the deadline rules (concludeOutrun). Only at the loss that reaches the
// limit (n): at each one after, an endpoint held closed by
// breaker.max_open_share was explored again at once, not once per
// router.explore_after.
func (e *Engine) exploreOutrun(ep *endpoint, n int64) {
	ep.suspect.Store(true)
	if n == e.outrunLimit() {
		ep.lastRead.Store(0)
	}
}

// owesSilenceVerdict says whether a, losing a race unanswered, is to run on
// to its deadline rather than be cut (stopRest): its endpoint has already
// lost enough races in a row unanswered to look hung (outrunLimit), has said
// nothing since a started, and its breaker is closed. Cut, it told the loss
// rule only that it lost again, which concludes nothing while the silence is
// shorter than a deadline; run on, its deadline passed unanswered does.
func (e *Engine) owesSilenceVerdict(a *attempt) bool {
	ep := a.ep
	return !a.trial && ep.unanswered.Load() >= e.outrunLimit() && ep.heardAt.Load() < a.start.UnixNano() &&
		ep.breaker.State() == breaker.Closed
}

// exploreAfterCharge makes an endpoint whose deadline was just charged,
// its breaker still closed and short of breaker.failures, due for
// exploration at once. Charged, it is suspect and ranked behind the
// others, so the charges that would open its breaker stop coming: a CI run
// had a hung endpoint charged twice at the fault, its other attempts
// outrun by hedges, then nothing until an exploration 5.4 s later
// (router.explore_after). Explored by a hedge sent at once beside the best
// candidate, which runs on to its deadline, it is judged again within a
// deadline, and an answer clears it as soon. A breaker held closed by
// breaker.max_open_share is past breaker.failures: explored at its pace.
func (e *Engine) exploreAfterCharge(ep *endpoint) {
	if info := ep.breaker.Info(); info.State == breaker.Closed && info.ConsecutiveFailures < e.cfg.Breaker.Failures {
		ep.lastRead.Store(0)
	}
}

// concludeOutrun trips the breaker of an endpoint that lost enough races
// unanswered and then let one attempt pass its whole deadline unanswered,
// charged as a hang: the silence the loss rule waited for. Not after a
// streak of ties (noteUnanswered): a healthy endpoint slower than the
// winner passes a deadline learnt from the few races it won whenever an
// answer falls in its tail. Under a.settle.
func (e *Engine) concludeOutrun(a *attempt, now time.Time) {
	ep := a.ep
	n := ep.unanswered.Load()
	if a.trial || n < e.outrunLimit() || ep.outrunByTies.Load() || ep.breaker.State() != breaker.Closed || !ep.unanswered.CompareAndSwap(n, 0) {
		return
	}
	ep.setLastError("no answer to its last attempts (outrun by hedges, then one past its deadline): looks hung", now)
	ep.breaker.Trip(fmt.Sprintf("%d attempts in a row outrun by hedges, then one unanswered for its deadline %s: endpoint looks hung", n, a.judgeDeadline().Round(time.Millisecond)))
	ep.markSilentIfCapRefused(now)
}
