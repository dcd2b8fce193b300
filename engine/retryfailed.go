package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A read whose every candidate has had its attempt, with one failed and the
// others passed their deadlines unanswered (a hang, or an endpoint slow for
// good), would wait for the request's deadline and fail: seconds later than
// the failure a client of the endpoint that failed would have had at once.
// An HTTP 500 or a broken connection is often gone on the next ask, so the
// endpoint that failed is asked again, beside the slow attempts: at once,
// then after a pause that doubles from retryPause, as long as the request
// has time left for the next ask (its own JSON-RPC error, likelier the
// request's own, as often as its breaker takes for a passing trouble).
// When it cannot be asked again and the rest hang, the read fails then
// (failBesideHangs).

// retryPause is the pause before the second ask again of an endpoint that
// failed; each next one doubles (retryPauseOf). A fixed count of asks
// (breaker.failures - 1) spent at once on a burst of 500s: with steady
// drained and tail hung, flaky's third failure in a row (the second at
// once, the third at tail's deadline) ended reads with an error after 2.1
// to 5.3 s, 0.2 to 0.6 a minute at 20 reads/s, though flaky answered its
// next ask and the request had seconds left.
const retryPause = 100 * time.Millisecond

// retryPauseOf is the pause before the k-th ask again (k from 1): none
// before the first, as a client asking again at once; then retryPause,
// doubling. The request's time bounds how many there are (mayRetry): an
// ask goes only with at least its pause (and retryPause) left, so a read
// of deadline T asks the endpoint at most 2 + log2((T+p)/3p) times more
// (p: retryPause): 7 for 10 s, 6 for 5 s, 9 for 60 s.
func retryPauseOf(k int) time.Duration {
	if k <= 1 {
		return 0
	}
	return retryPause << min(k-2, 20)
}

// transientFailure says whether a read attempt that ended so may succeed
// if asked again: an HTTP error, a broken connection, a malformed answer,
// the endpoint's own JSON-RPC error, or a 429 once its back-off is over (as
// a client honouring Retry-After asks again). Not a method the endpoint
// cannot serve, or a deadline.
func transientFailure(o outcome) bool {
	return o == outHTTPError || o == outConnError || o == outInvalid || o == outEndpointError || o == outRateLimit
}

// everyLive: attempts are live and every one is such that p.
func (x *execution) everyLive(p func(*attempt) bool) bool {
	return len(x.live) > 0 && !slices.ContainsFunc(x.live, func(a *attempt) bool { return !p(a) })
}

// allOverdue: attempts are live and every one has passed its deadline
// unanswered.
func (x *execution) allOverdue() bool {
	return x.everyLive(func(a *attempt) bool { return a.overdue.Load() })
}

// hangs says whether every live attempt hangs: passed its deadline, not
// excused (a pool slowdown, rpcdash's own), its endpoint quiet with work in
// flight as long as a stale endpoint waits for it (staleQuiet), and no
// late answer of it within breaker.cooldown (one is the mark of an
// endpoint slow, not hung, whose answer is worth waiting for rather than
// failing the read). Not while an answer is in hand (answerInHand): a late
// answer seconds ago kept it from the client until the request's deadline
// (5 s where quiet for the cold deadline gave it at 1.7 s). Beside a
// "cannot serve" in hand, an endpoint not known to serve the method hangs
// once past its deadline, and one not serving soon (it said so too, or is
// suspect) at once (cannotserve_held.go). later: all but the quiet have
// passed, so it may yet hang.
func (x *execution) hangs() (all, later bool) {
	now := x.e.now()
	inHand := x.answerInHand()
	// A "cannot serve" in hand waits on an endpoint not known to serve
	// the method no longer than its deadline (cannotserve_held.go).
	unservable := x.waitsOnlyOnUnservable()
	for _, a := range x.live {
		ep := a.ep
		if unservable && x.notServingSoon(ep) {
			continue
		}
		slow := !inHand && !unservable && now.Sub(time.Unix(0, ep.lateAt.Load())) < x.e.cfg.Breaker.Cooldown
		switch {
		case !a.overdue.Load() || a.excused.Load() && !unservable || slow:
			return false, false
		case unservable:
		case ep.silentFor(now) < max(a.deadline, x.e.coldDeadline(x.e.requestTimeout(x.p.method))):
			later = true
		}
	}
	return len(x.live) > 0 && !later, later
}

// answerInHand: the answer set aside is a result read at an older height
// (a latest, finalized or safe block below the floor, a Solana
// context.slot, a head behind the pool's), as good as a client of its
// endpoint gets. Not a null, an empty list or a not-yet error from an
// endpoint that may just lack the block, which the endpoint still running
// may well answer.
func (x *execution) answerInHand() bool {
	if x.fallback == nil {
		return false
	}
	info := x.fallback.rep.info
	return !info.HasError && !info.ResultNull && !info.ResultEmptyList
}

// failBesideHangs ends a read that has nothing left to wait for but the
// request's deadline: an attempt failed or an answer was set aside (below
// a floor: a latest, finalized or safe block, a Solana context.slot; or
// any other answer setAside holds back), the endpoint that failed was
// asked again or cannot be (run asks before calling this), none is held to
// look again later (waiting), and every live attempt hangs. The answer is
// the one the request would have had at its deadline: one set aside, an
// endpoint's error answer, or the last failure; a client of the endpoint
// that answered would have had it at once. While the hangs have not been
// quiet long enough, one is held to look again a deadline later.
func (x *execution) failBesideHangs(waiting bool, hold func(*attempt)) (result, bool) {
	if x.p.class != jsonrpc.ClassRead || x.last == "" && x.fallback == nil || waiting || x.retryPending() {
		return result{}, false
	}
	all, later := x.hangs()
	if later {
		hold(x.live[0])
	}
	if !all {
		return result{}, false
	}
	if res, ok := x.heldAnswer(); ok {
		return res, true
	}
	return x.fail(fmt.Sprintf("all %d attempts failed or hung (%s: nothing heard past the attempt deadline); last: %s", x.sent, x.liveNames(), x.last)), true
}

// liveNames names the endpoints of the live attempts.
func (x *execution) liveNames() string {
	names := make([]string, 0, len(x.live))
	for _, a := range x.live {
		names = append(names, a.ep.Name)
	}
	return endpointNames(names)
}

// retryFailed asks retryOn again (started) when it is still routable: its
// breaker closed, answering clients (not drained, a shadow or on the wrong
// chain since), not pinned elsewhere; while the request has
// time for the ask (mayRetry), once its pause is over (retryPauseOf): the
// second and later asks only while no attempt still running may answer
// (liveStuck), as a client of it retrying would ask. Not while an ask of it
// runs: that ask is the answer on its way, and another beside it one more
// request on the endpoint for the same answer (a slow ask passing its
// deadline had a third sent beside it, and a back-off's end and a hang's
// next look falling due together asked it twice in a millisecond). later:
// it is backing off after a 429, and may be asked once that is over. A
// pause not over is neither: backOffDue wakes the read at its end, and
// failBesideHangs waits for it (retryPending). Its answer would be old
// while a current endpoint may still answer (behindAgain): later too.
func (x *execution) retryFailed() (started, later bool) {
	if !x.mayRetry() || x.asking(x.retryOn) {
		return false, false
	}
	ep := x.retryOn
	if x.backingOff(ep) || x.behindAgain(ep) {
		return false, true
	}
	if x.pausing() || x.retried > 0 && !x.liveStuck(x.e.now()) {
		return false, false
	}
	if !x.startAgain(&attempt{ep: ep, role: roleFailover}) {
		return false, false
	}
	x.retried++
	return true, false
}

// asking says whether an attempt of this request on ep is live.
func (x *execution) asking(ep *endpoint) bool {
	return slices.ContainsFunc(x.live, func(a *attempt) bool { return a.ep == ep })
}

// retryFailedAt notes a failure of retryOn (out): its next ask waits its
// pause from now.
func (x *execution) retryFailedAt(out outcome) {
	x.retryAt = time.Now().Add(retryPauseOf(x.retried + 1))
	x.counted = out == outEndpointError
}

// mayRetry says whether retryOn may be asked again, backing off or pausing
// or not: its own JSON-RPC error answer (not charged to its breaker unless
// another endpoint answers, and likelier the request's own) up to
// breaker.failures - 1 times, once at least; any other failure while the
// request has, when the ask would go, at least its pause left and
// retryPause.
func (x *execution) mayRetry() bool {
	ep := x.retryOn
	if ep == nil || x.p.pinned != nil || !ep.answersClients() { // retryOn: reads only (run)
		return false
	}
	if x.unservableHeld() && !x.knownToServe(ep) {
		return false // cannotserve_held.go
	}
	counted := x.retried < max(x.e.cfg.Breaker.Failures-1, 1)
	dl, ok := x.ctx.Deadline()
	if x.counted || !ok {
		return counted
	}
	room := min(time.Until(dl), dl.Sub(x.retryAt))
	return room >= max(retryPauseOf(x.retried+1), retryPause)
}

// pausing: retryOn's pause before its next ask is not over.
func (x *execution) pausing() bool { return time.Now().Before(x.retryAt) }

// retryDue is when retryOn may be asked again, on the engine's clock: the
// later of the end of its back-off after a 429 and of its pause; zero when
// neither keeps it waiting.
func (x *execution) retryDue(now time.Time) time.Time {
	due := x.retryOn.backoffEnd(x.p.method, now)
	if w := time.Until(x.retryAt); w > 0 && now.Add(w).After(due) {
		due = now.Add(w)
	}
	return due
}

// retryPending: retryOn is to be asked again once its back-off or pause
// is over, its breaker closed: the read is not over yet.
func (x *execution) retryPending() bool {
	if !x.mayRetry() || !x.backingOff(x.retryOn) && !x.pausing() {
		return false
	}
	ok, trial := x.retryOn.breaker.Routable()
	return ok && !trial
}

// liveStuck: no attempt still running is on an endpoint that may answer
// it soon: each has passed its deadline, or its endpoint hangs (hangsNow)
// or is not answering (unanswering). Beside one that may, retryOn is not
// asked a second time before that one's deadline: the ask would be one
// more request on an endpoint that just failed, for a read another may
// answer.
func (x *execution) liveStuck(now time.Time) bool {
	return len(x.live) == 0 || x.everyLive(func(a *attempt) bool {
		return a.overdue.Load() || x.e.hangsNow(a.ep, now) || a.ep.unanswering(now)
	})
}

// retryWords is the failover note of an ask again begun at the end of a
// back-off or pause, beside the attempts still running.
func (x *execution) retryWords() string {
	if p := retryPauseOf(x.retried); p > 0 {
		return fmt.Sprintf("no answer yet; asking %s again beside this attempt (ask again %d, at least %s after its last failure)", x.retryOn.Name, x.retried, p)
	}
	return fmt.Sprintf("no answer yet; %s's back-off is over: asking it again beside this attempt", x.retryOn.Name)
}

// retryBeforeQuiet asks the endpoint that failed again (retryFailed) when
// the failover left is only an open breaker that hangs (hangsNow), or none
// is left and every attempt still running is on an endpoint that hangs: waiting
// costs the read that endpoint's attempt deadline before the endpoint that
// failed is asked again all the same. With steady drained and tail hung,
// each of flaky's 500s (5 %) held its read for tail's deadline, 2.2 s while
// cold, where a client of flaky asking again had its answer in 60 ms; and
// a 500 of flaky asked again beside tail waited tail's deadline (2.1 s)
// for its next ask. It is asked so once a request: 500s come in bursts,
// and a second 500 waits for its pause (retryPauseOf), not for the hang's
// deadline.
func (x *execution) retryBeforeQuiet() bool {
	if x.p.class != jsonrpc.ClassRead || x.atOnce {
		return false
	}
	now := x.e.now()
	if i := x.pick(false, true, false); i >= 0 {
		if c := x.order[i]; c.tier != 2 || !x.e.hangsNow(c.ep, now) {
			return false
		}
	} else if !x.liveQuiet(now) {
		return false
	}
	started, _ := x.retryFailed()
	x.atOnce = started
	return started
}

// liveUnanswering: attempts are live and every one is on an endpoint that
// is not answering (unanswering: suspect, or quiet past its pace).
func (x *execution) liveUnanswering(now time.Time) bool {
	return x.everyLive(func(a *attempt) bool { return a.ep.unanswering(now) })
}

// liveQuiet: attempts are live and every one is on an endpoint that hangs
// (hangsNow).
func (x *execution) liveQuiet(now time.Time) bool {
	return x.everyLive(func(a *attempt) bool { return x.e.hangsNow(a.ep, now) })
}

// retryNow is retryFailed for a failure that ends while every live attempt
// is overdue (their races have found no one): one of them is held to look
// again a deadline later when the endpoint is backing off.
func (x *execution) retryNow(hold func(*attempt)) bool {
	started, later := x.retryFailed()
	if !started && (later || x.backOffLeft()) {
		hold(x.live[0])
	}
	return started
}
