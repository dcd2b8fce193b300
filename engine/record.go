package engine

import (
	"errors"
	"fmt"
	"time"
)

// settle reports whether the caller is the one to give the breaker this
// attempt's verdict.
func (a *attempt) settle() bool { return a.settled.CompareAndSwap(false, true) }

// finishAttempt is where every attempt's ending is accounted for: breaker,
// windows, rates, hedge estimate, counters. cause is the attempt context's
// cancellation cause (nil when it ended on its own).
func (e *Engine) finishAttempt(a *attempt, p plan, rep upstreamReply, cause error) {
	ep, ms := a.ep, a.stats
	end := e.now()
	ep.inflight.Add(-1)
	if a.hangTimer != nil {
		a.hangTimer.Stop()
	}
	if a.hedgeDone != nil {
		a.hedgeDone()
	}
	elapsed := end.Sub(a.start)
	e.hedge.observeAttempt(rep.out)
	if a.role == RoleHedge {
		ms.rates.Count(RateHedge) // where this method's hedges go (the forecast's targets)
	}

	lost := errors.Is(cause, errLost)
	if lost || rep.out == outCancelled {
		// Not the endpoint's fault: no verdict for the breaker, no failure.
		if a.settle() {
			ep.breaker.Release(a.trial)
		}
		ep.rates.Count(RateAttempts, RateCancelled)
		ms.rates.Count(RateAttempts)
		if lost && rep.out == outAnswer {
			ep.series.answered(end, elapsed)
		} else {
			ep.series.ended(end)
		}
		e.metrics.attempt(ep.Name, p.acct.name, a.role, "cancelled")
		if lost {
			e.recordLoser(a, p, rep, elapsed, end)
		}
		return
	}

	e.metrics.attempt(ep.Name, p.acct.name, a.role, rep.out.String())
	switch rep.out {
	case outAnswer:
		e.recordAnswer(a, elapsed, end)
		if a.role == RolePrimary {
			e.hedge.observePrimary(p.method, elapsed, false)
		}
		if rep.head > 0 {
			e.observeHead(ep, rep.head, false) // a passive answer's head counts too
		}
	case outRateLimit:
		e.recordRateLimit(a, rep, end)
	default:
		if rep.out.responded() {
			ep.heard(end)
		}
		if a.settle() { // else it was counted when its deadline passed
			e.countFailure(a, p.acct, rep.out, rep.cause)
		}
	}
}

// recordAnswer feeds an answer (client attempt or probe) into the
// endpoint's state: latency windows, success rates, breaker verdict.
func (e *Engine) recordAnswer(a *attempt, elapsed time.Duration, end time.Time) {
	ep, ms := a.ep, a.stats
	ep.heard(end)
	ms.latency.Record(elapsed)
	ep.latency.Record(elapsed)
	ep.series.answered(end, elapsed)
	ep.rates.Count(RateAttempts, RateSuccess)
	ms.rates.Count(RateAttempts, RateSuccess)
	if a.settle() {
		ep.breaker.Success(a.trial)
	}
	ep.backOffSucceeded()
}

// recordRateLimit backs the endpoint off after a 429 (client attempt or
// probe): Retry-After when it came with one, else exponential.
func (e *Engine) recordRateLimit(a *attempt, rep upstreamReply, end time.Time) {
	ep, ms := a.ep, a.stats
	ep.heard(end)
	ep.rates.Count(RateAttempts, Rate429)
	ms.rates.Count(RateAttempts, Rate429)
	ep.series.failed(end)
	if a.settle() {
		ep.breaker.Release(a.trial)
	}
	d := ep.backOff(end, rep.retryAfter, e.cfg.Breaker.BackoffBase, e.cfg.Breaker.BackoffMax)
	ep.setLastError("HTTP 429", end)
	e.events.add(Event{Type: EventBackoff, Endpoint: ep.Name, Message: fmt.Sprintf("HTTP 429: backing off for %s", d.Round(time.Millisecond))})
}

// recordLoser accounts for an attempt cancelled because another won: what
// it tells about latency (exact if it had answered, else only "more than it
// ran"), the upstream time it used and how long it took to let go.
func (e *Engine) recordLoser(a *attempt, p plan, rep upstreamReply, elapsed time.Duration, end time.Time) {
	ep, ms := a.ep, a.stats
	ran := a.cancelAt.Sub(a.start)
	if rep.out == outAnswer {
		ms.latency.Record(elapsed)
		ep.latency.Record(elapsed)
	} else {
		e.noteUnanswered(a, end)
		if ran > 0 {
			ms.latency.RecordCensored(ran)
			ep.latency.RecordCensored(ran)
		}
	}
	if a.role == RolePrimary {
		e.hedge.observePrimary(p.method, ran, rep.out != outAnswer)
	}
	release := end.Sub(a.cancelAt)
	for _, c := range []*counts{p.acct, &ep.acct} {
		c.losers.Add(1)
		c.loserNanos.Add(int64(elapsed))
		c.releaseNanos.Add(int64(release))
	}
	e.metrics.release.Observe(release.Seconds())
}

// countHang charges a write that is still hanging past its attempt deadline
// to its endpoint, so the breaker and the score see it before it ends.
func (e *Engine) countHang(a *attempt, mc *counts) {
	if a.settle() {
		e.countFailure(a, mc, outTimeout, fmt.Sprintf("no answer within the attempt deadline %s", a.deadline.Round(time.Millisecond)))
	}
}

// countFailure charges a failed attempt to its endpoint (and to the method's
// counters when it was a client attempt, mc != nil).
func (e *Engine) countFailure(a *attempt, mc *counts, out outcome, cause string) {
	ep, ms := a.ep, a.stats
	if out == outTimeout {
		ep.rates.Count(RateAttempts, RateFailure, RateTimeout)
		ms.rates.Count(RateAttempts, RateFailure, RateTimeout)
	} else {
		ep.rates.Count(RateAttempts, RateFailure)
		ms.rates.Count(RateAttempts, RateFailure)
	}
	ep.acct.failures.Add(1)
	ep.series.failed(e.now())
	if mc != nil {
		mc.failures.Add(1)
	}
	ep.setLastError(cause, e.now())
	ep.breaker.Failure(a.trial, cause)
}

// noteFailover logs failovers without flooding: one event per endpoint per
// second, carrying how many were folded into it.
func (e *Engine) noteFailover(from *Endpoint, cause string) {
	now := e.now()
	e.mu.Lock()
	st := e.failoverLog[from.Name]
	st.count++
	emit := now.Sub(st.last) >= time.Second
	n := st.count
	if emit {
		st.last, st.count = now, 0
	}
	e.failoverLog[from.Name] = st
	e.mu.Unlock()
	if emit {
		msg := "failed over: " + cause
		if n > 1 {
			msg = fmt.Sprintf("failed over %d times: %s", n, cause)
		}
		e.events.add(Event{Type: EventFailover, Endpoint: from.Name, Message: msg})
	}
}

type failoverStat struct {
	last  time.Time
	count int
}

func (e *Engine) onBreakerTransition(ep *Endpoint, t BreakerTransition) {
	msg := t.Reason
	if t.To == BreakerOpen {
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
// concurrent requests loses a dozen races at once, then answers again.
func (e *Engine) noteUnanswered(a *attempt, end time.Time) {
	ep := a.ep
	limit := int64(2 * e.cfg.Breaker.Failures)
	n := ep.unanswered.Add(1)
	if n < limit || end.Sub(time.Unix(0, ep.heardAt.Load())) < a.deadline {
		return
	}
	ep.unanswered.Store(0)
	ep.setLastError("no answer to its last attempts (outrun by hedges): looks hung", e.now())
	ep.breaker.Trip(fmt.Sprintf("%d attempts in a row outrun by hedges and no answer for %s: endpoint looks hung", n, end.Sub(time.Unix(0, ep.heardAt.Load())).Round(time.Millisecond)))
}
