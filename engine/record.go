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
			ms.rates.Count(window.Attempts, window.Cancelled)
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
		e.metrics.attempt(ep.Name, p.acct.name, a.counted(), "cancelled", 1)
		if lost {
			e.recordLoser(a, p, rep, elapsed, end)
		}
		return elapsed
	}

	e.metrics.attempt(ep.Name, p.acct.name, a.counted(), rep.out.String(), 1)
	switch rep.out {
	case outAnswer:
		switch learnt := e.recordAnswer(a, elapsed, end); {
		case a.role != rolePrimary:
		case learnt:
			e.hedge.observePrimary(p.method, elapsed, false)
		default:
			e.hedge.untimedPrimary(p.method)
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
			// endpoint's fault, but its last error says what happened.
			ep.rates.Count(window.Attempts, window.Timeout)
			ms.rates.Count(window.Attempts, window.Timeout)
			ep.setLastError(rep.cause, end)
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
	a.ep.overdue.add(a.start, now)
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
	a.chargeHang(fmt.Sprintf("no answer within the attempt deadline %s", d.Round(time.Millisecond)), now, e.cfg.Breaker.Cooldown)
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
// (excuse), and marks a so: its breaker hears nothing of it. The endpoint,
// excused or charged, is silent only when nothing of it was heard for the
// attempt's whole deadline (one heavy call overdue everywhere says nothing
// of the endpoints' other answers), and never for rpcdash's own slowness.
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
		// Charged, and ranked after the endpoints that answer when nothing
		// of it was heard for the whole deadline: ranked by cost alone, a
		// lone hang kept first reads until its breaker opened, each
		// waiting out its deadline (2 reads a second: the next read after
		// the charge did). Its verdict needs no such read: the attempt
		// that met the hang runs on, and its silence is charged again at
		// each further deadline (silence.go), and probes check it sooner
		// (NeedsCheck).
		if now.Sub(time.Unix(0, a.ep.heardAt.Load())) >= a.judgeDeadline() {
			a.ep.silentAt.Store(now.UnixNano())
		}
		return false
	}
	a.excused.Store(true)
	if kind != "self" && now.Sub(time.Unix(0, a.ep.heardAt.Load())) >= a.judgeDeadline() {
		a.ep.silentAt.Store(now.UnixNano())
	}
	return true
}

// chargeHang gives a's breaker its verdict at a's deadline, now: a hang
// (a client attempt's or a probe's), and marks its method hung on the
// endpoint for hold (breaker.cooldown) at first (methodhang.go). Under
// a.settle.
func (a *attempt) chargeHang(msg string, now time.Time, hold time.Duration) {
	a.paceKnown.Store(!a.guessed && a.stats.latency.Count() > 0)
	if !a.charged.Swap(true) {
		a.ep.silentRequests.Add(1)
	}
	a.ep.setLastError(msg, now)
	if a.sentIntoEndedFault() {
		a.ep.breaker.Release(a.trial)
		return
	}
	a.ep.hangAt.Store(now.UnixNano())
	a.ep.noteHangSent(a.start)
	if !a.stats.shared {
		a.stats.hang.mark(now, hold)
	}
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
		if a.slowTrial.Load() && a.sentIntoEndedFault() {
			ep.breaker.Release(true)
		} else if a.slowTrial.Load() {
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
// state (answered); its latency is not learnt when rpcdash's own slowness
// timed it (timedOwnStall), and learnt says whether it was.
func (e *Engine) recordAnswer(a *attempt, elapsed time.Duration, end time.Time) (learnt bool) {
	learnt = !e.timedOwnStall(a, elapsed)
	if learnt {
		e.learnLatency(a, elapsed)
		a.ep.answers.add(a.stats.method, a.start, elapsed)
		a.ep.concurrency.add(end, a.exchanges, elapsed)
	}
	a.ep.series.answered(end, elapsed)
	e.answered(a, end)
	return learnt
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
	learn := !e.timedOwnStall(a, elapsed) // rpcdash's own stall says nothing of the endpoint
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
	switch {
	case a.role != rolePrimary:
	case !learn:
		e.hedge.untimedPrimary(p.method)
	case rep.out == outAnswer:
		e.hedge.observePrimary(p.method, elapsed, false)
	default:
		e.hedge.observePrimary(p.method, ran, true)
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
	if a.sentIntoEndedFault() {
		a.ep.breaker.Release(a.trial)
		return
	}
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
		ep.noteClosed()
	}
	if t.To == breaker.Open && t.From == breaker.Closed {
		ep.openedAt.Store(ep.rates.Mark())
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
