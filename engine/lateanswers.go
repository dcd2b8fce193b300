package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// A late answer — one that came after its attempt was charged to the
// breaker at its deadline — says the endpoint is slow, not hung. Whether it
// ends the run of failures depends on what the deadline it passed rested on:
//   - a guess (the endpoint had not answered the method yet): the answer
//     ends the run, so that a method slow by nature is learnt, not cut;
//   - the method's own answers: the charge stands until an answer within
//     its deadline ends the run. An endpoint whose every answer now passes
//     the deadline its own answers set (20 ms reads now taking 2 s) has
//     left its record, which is what the breaker is for; an endpoint with a
//     heavy tail answers in time between its slow answers, which ends each
//     run at once.
//
// While such a run lasts its late answers wait out of the latency windows
// (lateHold): entered at once, two 2-s answers among twenty-odd fast ones
// are the window's p99, the deadline jumps to three times that, and nothing
// after is charged — the run the breaker is judging would be hidden by the
// answers it is judging. They enter with the next answer that is not held:
// one in time (the run was a tail, or the endpoint is back to its pace), or
// any once breaker.max_open_share has kept the breaker from opening: a run that
// cannot end in a cut (the pool's only endpoint) is no reason to keep the
// deadline from the pace, racing or charging every attempt meanwhile. The
// router does not wait for them: they are among the endpoint's last answers
// (lastanswers.go), two of which steer reads away. While the breaker is
// open or half-open, answers too slow for a trial wait as well (holdsLate),
// so that the pace its trials are judged by is the one it had.

// maxHeldAnswers bounds the late answers held for one endpoint; past it they
// all go in (a run that long has opened the breaker, and a slowness that
// outlasts 64 answers while it is out is becoming its pace).
const maxHeldAnswers = 64

type heldAnswer struct {
	stats *methodStats
	took  time.Duration
}

type lateHold struct {
	mu   sync.Mutex
	held []heldAnswer
	// any: something is held (every answer looks; few take the lock).
	any atomic.Bool
}

// learnLatency feeds an answer's latency into the windows its endpoint's
// deadlines and score come from, or holds it while its run lasts.
func (e *Engine) learnLatency(a *attempt, took time.Duration) {
	ep := a.ep
	ep.queueLatency.Record(took)
	ep.last.add(took)
	a.stats.last.add(took)
	e.judgeTrialPace(a, took)
	if e.holdsLate(a, took) && ep.late.hold(a.stats, took) {
		return
	}
	for _, h := range ep.late.take() {
		h.stats.latency.Record(h.took)
		ep.latency.Record(h.took)
	}
	a.stats.latency.Record(took)
	ep.latency.Record(took)
}

// holdsLate says whether an answer waits out of the windows: a late one
// while its endpoint's run of failures is judged (closed and counting, not
// held closed by the cap), or, while its breaker is not closed, one too
// slow for a trial: a failed trial's, or an observing probe's past the
// endpoint's pace deadline (trial_deadline.go). Entered at once, the
// answers of an endpoint cut for its slowness would move the pace its
// trials are judged by while it is out; a slowness that lasts still
// reaches the window, 64 answers at a time.
func (e *Engine) holdsLate(a *attempt, took time.Duration) bool {
	if !a.charged.Load() && took < e.cfg.Breaker.AttemptTimeoutMin {
		return false // within any deadline: most answers, without the breaker's lock
	}
	ep := a.ep
	info := ep.breaker.Info()
	switch {
	case info.State == breaker.Closed:
		return info.ConsecutiveFailures > 0 && a.charged.Load() && a.paceKnown.Load() && !e.heldClosedByCap(ep, e.now())
	case a.trial:
		return a.charged.Load() || a.slowTrial.Load()
	}
	d, _, ok := e.paceDeadline(ep, a.stats)
	return ok && took > d
}

// hold keeps a late answer's latency; false when the hold is full.
func (l *lateHold) hold(s *methodStats, took time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) >= maxHeldAnswers {
		return false
	}
	l.held = append(l.held, heldAnswer{s, took})
	l.any.Store(true)
	return true
}

// latencies copies the held answers' latencies, of one method's stats or
// (s nil) of all: what the Snapshot counts in, so that a screen shows every
// answer while the windows the deadlines read wait for them.
func (l *lateHold) latencies(s *methodStats) []time.Duration {
	if !l.any.Load() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Duration
	for _, h := range l.held {
		if s == nil || h.stats == s {
			out = append(out, h.took)
		}
	}
	return out
}

// take empties the hold.
func (l *lateHold) take() []heldAnswer {
	if !l.any.Load() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.held
	l.held = nil
	l.any.Store(false)
	return h
}
