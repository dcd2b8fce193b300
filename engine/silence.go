package engine

import (
	"fmt"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// A hang is charged once per deadline, and a hung endpoint is out after
// breaker.failures of them. At high traffic that many attempts meet the
// hang at once; at low traffic the first charge is the last attempt it
// gets: the router ranks it behind the others at once (a timeout in its
// rates, its suspect mark), and only probes, one per probes.interval,
// reached it. Its breaker stayed closed 7 to 12 s beside a hang the engine
// already steered around (a timeout fault at the shipped config's 20
// reads/s). So an overdue attempt that its endpoint still says nothing to
// is charged again at each further deadline it passes, judged by the same
// rule as the first (a pool slowdown or rpcdash's own stall excuses it):
// silence for breaker.failures deadlines is breaker.failures deadlines
// passed, whether one attempt or many waited through them.

// deadlinePassed runs at each deadline of a that passes while it runs: the
// first is attemptOverdue, each further one stillSilent.
func (e *Engine) deadlinePassed(a *attempt, x *execution) {
	if a.ended.Load() {
		return
	}
	switch {
	case !a.overdue.Load():
		e.attemptOverdue(a, x)
	case a.awaitsJudgement():
		e.judgeBorrowed(a)
	default:
		e.stillSilent(a)
	}
	if a.awaitsJudgement() {
		a.hangTimer.Reset(a.judgeAfter - a.deadline)
		if a.ended.Load() {
			a.hangTimer.Stop()
		}
	} else if e.watchesSilence(a) {
		// A deadline after the one just passed was due, not after this
		// timer fired: one firing late (a loaded machine) made every later
		// one as late, and each was excused as rpcdash's own stall.
		a.hangTimer.Reset(max(a.due().Add(a.deadline).Sub(e.now()), 0))
		if a.ended.Load() {
			a.hangTimer.Stop() // it ended meanwhile, after finishAttempt's Stop
		}
	}
}

// watchesSilence says whether a's next deadline is to be judged: it runs
// on, its endpoint has said nothing since it started, and its breaker is
// closed (an open or half-open one has its verdict, or a trial's).
func (e *Engine) watchesSilence(a *attempt) bool {
	return !a.ended.Load() && !a.trial && a.ep.heardAt.Load() < a.start.UnixNano() &&
		a.ep.breaker.State() == breaker.Closed
}

// stillSilent judges a further deadline a has passed with its endpoint
// silent since a started: charged, unless excused as the first was not
// (excuse). The attempt's own verdict is given by then, so that a late
// answer does not count as a success either.
func (e *Engine) stillSilent(a *attempt) {
	if !e.watchesSilence(a) {
		return
	}
	n := a.passed.Add(1)
	// A deadline after the one before, as deadlinePassed's timer counts:
	// after a borrowed deadline's verdict at the cold one, whole borrowed
	// deadlines from the start put it 3 s back, and excuse read the 3 s as
	// rpcdash's own stall.
	a.dueAt.Store(a.due().Add(a.deadline).UnixNano())
	e.chargeSilence(a, fmt.Sprintf("no answer for %s (%d attempt deadlines of %s)", e.now().Sub(a.start).Round(time.Millisecond), n, a.deadline.Round(time.Millisecond)))
}

// chargeSilence charges a further deadline of a's silence while another
// endpoint answers a's method at its pace (answeredAtPaceAcross), unless
// excused. Without such an answer nothing says the endpoint is not simply
// slow: one attempt of the pool's only endpoint answering in 600 ms is one
// deadline passed, not two. It says whether it charged.
func (e *Engine) chargeSilence(a *attempt, msg string) bool {
	now := e.now()
	if !e.othersAnswerAtPace(a) && !e.outlastedNow(a, now) || !e.silenceOutlastsTail(a, now) {
		return false
	}
	switch e.excuse(a, now) {
	case "self", "pool":
		return false
	case "hung":
		a.ep.silentAt.Store(now.UnixNano())
	}
	a.settle()
	a.chargeHang(msg, now, e.cfg.Breaker.Cooldown)
	return true
}

// silenceSamples is how many answers of an endpoint it takes to know its
// tail: with 5 % of answers slow, 100 hold two or more of them 96 times in
// 100, so their p99 is a slow one's.
const silenceSamples = 100

// silenceOutlastsTail says whether a's silence so far is a hang rather
// than one request's tail. A method's deadline may rest on 5 answers, none
// of them slow: the shipped config's tail endpoint (5 % of answers 0.4–1.2 s)
// had its breaker opened 2 s after start by one 762 ms answer, charged at
// three 253 ms deadlines, a healthy endpoint out for its cooldown. So the
// silence must outlast the endpoint's own deadline over all its answers
// (endpointDeadline), once they are silenceSamples and show its tail.
//
// Whatever its answers, the silence is a hang when another request of the
// endpoint's own was charged a hang within it too (silentRequests: a tail
// is one request's, and 1 in 400 for two at 5 %; an endpoint answering
// anything in between is not silent). Before its tail is known, it is
// also one when it outlasts the cold deadline, which judges the silence of
// an endpoint whose pace is unknown. Without either, a hung endpoint of
// fewer than 100 answers was charged once per attempt, and ranked behind
// the others after the first, it got few more: with probes off its
// breaker stayed closed (2 reads a second beside two endpoints answering:
// closed 4 s after the read that met the hang, no later read sent to it).
// Past 100 answers, the second request was not heard either: an endpoint
// whose answers showed a long tail (5 of 100 at 1.1 s: its deadline 3.3 s)
// had one read's silence wait out that deadline beside a second silent
// request before it counted again.
func (e *Engine) silenceOutlastsTail(a *attempt, now time.Time) bool {
	if a.ep.silentRequests.Load() >= 2 {
		return true
	}
	silent := now.Sub(a.start)
	q, n := a.ep.latency.AnswerQuantile(e.cfg.Breaker.AttemptTimeoutQuantile)
	if n >= silenceSamples {
		d, _ := e.deadlineAt(q, e.cfg.Server.RequestTimeout)
		return silent > d
	}
	limit := e.cfg.Server.RequestTimeout
	if a.stats != nil {
		limit = e.methodLimit(a.stats)
	}
	return silent > e.coldDeadline(limit)
}

// due is when the deadline a passed last fell (the first one before any
// has passed).
func (a *attempt) due() time.Time {
	if at := a.dueAt.Load(); at != 0 {
		return time.Unix(0, at)
	}
	return a.start.Add(a.deadline)
}

// A probe's deadline is probes.timeout, or the client attempts' when that
// is longer: a probe is held to no stricter one. Past it, a probe of an
// endpoint that has said nothing since is charged again at each further
// client attempt deadline of the method while it listens on, as a client
// attempt would be: an endpoint the router has ranked behind the others
// gets probes and little else, and one probe charged per probes.interval
// left its breaker closed 9.5 to 12 s after a timeout fault (an endpoint
// with a 5 % error rate beside two better ones, at 2, 5 and 20 reads/s).

// probeSilencePace is how often a probe past its deadline hang is judged
// again: the client attempts' deadline for the method when one is learned
// and shorter; 0 when none is.
func (e *Engine) probeSilencePace(ep *endpoint, s *methodStats, hang time.Duration) time.Duration {
	d, source := e.attemptDeadline(ep, s)
	if source == deadlineCold || d >= hang {
		return 0
	}
	return d
}

// watchProbeSilence judges, every pace after its deadline hang, a probe
// whose endpoint still says nothing, until done closes, the probe's
// breaker opens or its endpoint speaks. stop ends the probe: a charge that
// opened the breaker ends it at once, as probeOverdue's last straw does.
func (e *Engine) watchProbeSilence(a *attempt, pace time.Duration, done <-chan struct{}, stop func()) {
	if pace <= 0 || !a.charged.Load() && !a.excused.Load() {
		return // answered, given its verdict otherwise, or no verdict to give
	}
	t := time.NewTimer(pace)
	defer t.Stop()
	for n := 1; e.watchesSilence(a); n++ {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if !e.watchesSilence(a) {
			return
		}
		due := a.start.Add(a.deadline + time.Duration(n)*pace)
		a.dueAt.Store(due.UnixNano())
		a.passed.Add(1)
		msg := fmt.Sprintf("probe: no answer for %s (its deadline %s, then %d attempt deadlines of %s)", e.now().Sub(a.start).Round(time.Millisecond), a.deadline.Round(time.Millisecond), n, pace.Round(time.Millisecond))
		if e.chargeSilence(a, msg) && a.ep.breaker.State() != breaker.Closed {
			stop()
			return
		}
		t.Reset(pace)
	}
}

// othersAnswerAtPace says whether another endpoint that takes client
// traffic answered a's method at its pace after a was sent.
func (e *Engine) othersAnswerAtPace(a *attempt) bool {
	for _, ep := range e.endpoints {
		if ep != a.ep && !ep.refusing.Load() && ep.answersClients() && ep.answeredAtPaceAcross(a.method(), a.start) {
			return true
		}
	}
	return false
}
