package engine

import (
	"fmt"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// The hang that hedging hides: an endpoint whose attempts hedges outrun
// before their deadline is never charged at one, and is judged by its
// losses instead.

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
	silence := end.Sub(time.Unix(0, ep.heardAt.Load()))
	if ep.outrunByTies.Load() || silence < a.judgeDeadline() {
		e.exploreOutrun(ep, n)
		return true
	}
	if kind, _ := e.overloaded(ep, silence, a.deadline/2, 0); kind != "" {
		e.exploreOutrun(ep, n) // rpcdash, not the endpoint, may be the slow part
		return true
	}
	ep.unanswered.Store(0)
	e.tripOutrun(ep, "", fmt.Sprintf("%d attempts in a row outrun by hedges and no answer for %s", n, silence.Round(time.Millisecond)), end)
	return true
}

// tripOutrun opens ep's breaker on the loss rule's verdict: why says what
// its losses (and then deadline) showed; also is added to its last error.
func (e *Engine) tripOutrun(ep *endpoint, also, why string, now time.Time) {
	ep.suspect.Store(true)
	ep.setLastError("no answer to its last attempts (outrun by hedges"+also+"): looks hung or far slower than the others", now)
	// Cut before it answered, a hung endpoint and one slower than a hedge
	// delay plus the winner's pace look the same from here: a +250 ms
	// latency fault was told as a hang (console audit, stop 56).
	ep.breaker.Trip(why + ": endpoint looks hung, or far slower than the endpoints that answered for it")
	ep.markSilentIfCapRefused(now)
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
		ep.exploreNow()
	}
}

// owesSilenceVerdict says whether a, losing a race unanswered, is to run on
// to the deadline where its silence is judged rather than be cut
// (stopRest). Its endpoint has said nothing since a started, and either
// a was raced at a borrowed deadline (its cold one judges it,
// judgeBorrowed: cut, a hung cold endpoint was judged only by its one tail
// sample and probes, closed for 11 s, not 4), or, not yet overdue, its
// endpoint has already lost enough races in a row unanswered to look hung
// (outrunLimit) and its breaker is closed (attemptOverdue: cut, it told
// the loss rule only that it lost again, which concludes nothing while the
// silence is shorter than a deadline).
func (e *Engine) owesSilenceVerdict(a *attempt) bool {
	ep := a.ep
	if ep.heardAt.Load() >= a.start.UnixNano() {
		return false
	}
	if a.awaitsJudgement() {
		return true
	}
	return !a.overdue.Load() && !a.trial && ep.unanswered.Load() >= e.outrunLimit() && ep.breaker.State() == breaker.Closed
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
		ep.exploreNow()
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
	e.tripOutrun(ep, ", then one past its deadline", fmt.Sprintf("%d attempts in a row outrun by hedges, then one unanswered for its deadline %s", n, a.judgeDeadline().Round(time.Millisecond)), now)
}
