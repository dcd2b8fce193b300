package engine

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// A pool slowdown's answers stay in the latency windows for
// server.stats_window after the pool is back at its pace. All three sims
// slowed by 3 s for 12 s left every endpoint's p90 at 3 s for minutes:
// the routing figures (p50 blended with p90) read about 1.5 s for each, so
// one endpoint slowed by 1 s on its own afterwards still took a third of
// the reads (p90 1,061 ms against 83 ms for a client of a healthy one),
// and every method's auto hedge delay sat at hedge.max_delay, no read
// hedged. So once an endpoint's own answers are back at the pace it had
// before the slowdown, the answers it gave since the slowdown began are
// forgotten from its latency windows (its routing figure, tail share and
// attempt deadlines read its pace again; its counts of requests and
// failures are kept: the promotion of a canary reads them, and a client
// reads them on the screen), and once half the endpoints answering
// are back, so are the hedge delays' primaries (when no endpoint's figure
// moved, those of each method whose quantile did). An endpoint still slow
// keeps them: they say what it is. One whose figure the slowdown did not
// move (a hiccup of a few answers) keeps what it learnt around it. A
// slowdown that does not end is the pool's new pace, and its answers age
// in as any.

// Back at its pace: the median of its last three answers within
// 2 × its usual pace before the slowdown, plus paceSlack.
const paceSlack = 10 * time.Millisecond

// near says whether d is within the pace taken before the slowdown.
func (p *paceBefore) near(d time.Duration) bool { return nearPace(p.pace, d) }

// nearPace says whether d is back at pace: within 2 × pace, plus paceSlack.
func nearPace(pace, d time.Duration) bool { return d <= 2*pace+paceSlack }

// slowAftermath is the pool slowdown whose answers may yet be forgotten.
type slowAftermath struct {
	on          atomic.Bool // one is pending (the watch loop's cheap test)
	mu          sync.Mutex
	first, last time.Time // its first and latest excused deadlines
	eps         map[*endpoint]*paceBefore
	// moved: an endpoint's figure had moved with the slowdown, and its
	// answers were forgotten; hedgeDone: the hedge delays' were, if so.
	moved, hedgeDone bool
	// hedgeBefore: the hedge delays' quantiles as the slowdown began, for
	// when no endpoint's figure moved but their quantiles did; byMedians:
	// the queue guard noted it (most endpoints' medians moved), not only
	// deadlines passed at once, which tails coinciding may make.
	hedgeBefore hedgePaces
	byMedians   bool
}

// paceBefore is an endpoint's pace before the slowdown.
type paceBefore struct {
	pace time.Duration // its usual pace (usualLatency) as the slowdown began
	// began: the last time its pace was still near pace, when the
	// slowdown began before the first excused deadline (zero: not known).
	began time.Time
	seen  uint64 // its answers so far (lastAnswers.n) at the latest excused deadline
	done  bool   // its answers of the slowdown are forgotten (or moved nothing)
	// backAt: when it was found back at its pace, its slowdown answers to
	// be forgotten once wait has passed.
	backAt time.Time
	wait   time.Duration
	// young: its window held fewer than fullSamples answers, so its pace
	// was its median alone (usualPace), and its figure is judged so.
	young bool
}

// noted runs at each excused deadline of a pool slowdown: the first of an
// aftermath takes each endpoint's pace; each marks where the answers after
// it start. A slowdown that comes back before its answers are forgotten
// keeps the pace taken before it began, unless the last one was a
// sub-window of server.stats_window ago or more: an aftermath kept on by
// an endpoint that answers nothing would otherwise have a slowdown minutes
// later forget everything since the first one. byMedians: the queue guard
// noted it.
func (s *slowAftermath) noted(e *Engine, now time.Time, byMedians bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on.Load() || now.Sub(s.last) >= e.cfg.Server.StatsWindow/window.DefaultBuckets {
		s.first, s.moved, s.byMedians = now, false, false
		s.hedgeBefore = e.hedge.paces()
		s.eps = map[*endpoint]*paceBefore{}
		for _, ep := range e.endpoints {
			pace, _, _, ok := ep.usualLatency(nil)
			if !ok {
				continue
			}
			// The pace before the slowdown began, which may be well before
			// this first excused deadline (paceHistory).
			p := &paceBefore{pace: pace, young: ep.latency.Count() < fullSamples}
			if was, stillAt, ok := ep.paces.before(now); ok && was < pace {
				p.pace, p.began = was, stillAt
			}
			s.eps[ep] = p
		}
		s.on.Store(true)
	}
	s.last = now
	s.hedgeDone = false
	s.byMedians = s.byMedians || byMedians
	for ep, p := range s.eps {
		p.seen, p.done, p.backAt = ep.last.n.Load(), false, time.Time{}
	}
}

// check forgets the slowdown's answers of each endpoint back at its pace,
// and the hedge delays' once half the endpoints answering are (the watch
// loop runs it).
func (s *slowAftermath) check(e *Engine, now time.Time) {
	if !s.on.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.last) > e.cfg.Server.StatsWindow {
		s.on.Store(false) // aged out of the windows
		return
	}
	if now.Sub(s.last) < slowQuiet {
		return
	}
	// Attempts sent before the first excused deadline ran in it too, and
	// an endpoint's pace may have risen before that (began).
	since := s.first.Add(-e.cfg.Server.RequestTimeout)
	for _, p := range s.eps {
		if !p.began.IsZero() && p.began.Before(since) {
			since = p.began
		}
	}
	answering, back, pending, waiting := 0, 0, false, false
	for ep, p := range s.eps {
		if ep.last.n.Load() < p.seen+3 {
			pending = pending || !p.done
			continue // not three answers since
		}
		answering++
		med, _ := ep.last.median()
		if !p.near(med) {
			p.backAt = time.Time{}
			pending = pending || !p.done
			continue
		}
		back++
		if p.done {
			continue
		}
		fig, _, _, ok := ep.usualLatency(nil)
		if ok && p.young {
			// Like for like: from a young window's median, the blend with
			// the p90 a fuller window has moved the figure of an endpoint
			// with 8 % of its answers in a tail at 240-360 ms; its tails,
			// the coincidence of two of which passed two deadlines at the
			// 250 ms floor, were forgotten from the windows that set those
			// deadlines, and with them the hedge delays' primaries (300 of
			// 500). A slowdown that moved it moves its median.
			fig = ep.latency.Quantile(0.5)
		}
		if !ok || p.near(fig) {
			p.done = true // a hiccup: its figure did not move
			continue
		}
		// Its attempts sent before it came back answer at the slowdown's
		// pace, about its figure now: forgotten once they are in.
		if p.backAt.IsZero() {
			p.backAt, p.wait = now, min(2*fig, e.cfg.Server.RequestTimeout)
		}
		if now.Sub(p.backAt) < p.wait {
			pending, waiting = true, true
			continue
		}
		p.done, s.moved = true, true
		// Until its window holds enough answers again, the router reads
		// the pace it had before: unmeasured, it took the pool's best
		// figure, an endpoint's still slow.
		ep.priorPace.Store(int64(p.pace))
		n, from := ep.latency.Forget(since)
		ep.batchPace.Forget(since)
		for _, ms := range ep.methods.all() {
			ms.latency.Forget(since)
		}
		e.events.add(Event{Type: EventPool, Endpoint: ep.Name, Message: fmt.Sprintf(
			"back at its pace after the slowdown (its last answers %s, %s before it): its %d answers since %s forgotten, so that routing and its deadlines read its pace again",
			med.Round(time.Millisecond), p.pace.Round(time.Millisecond), n, from.Format("15:04:05"))})
	}
	if !s.hedgeDone && !waiting && back > 0 && 2*back >= answering {
		s.hedgeDone = true
		if s.moved {
			e.hedge.forget(since)
		} else if s.byMedians {
			// Slowed answers a small share of each endpoint's window
			// (three 20 ms endpoints at 220 ms for 10 s, beside 8 s
			// before it at 20 ms) move no routing figure, but the p95 of
			// the primaries: the auto hedge delay stayed at 223 ms. Only
			// when medians moved: deadlines passed at once may be tails
			// coinciding, whose primaries say what the endpoints are (a
			// young window's p95 short of an 8 % tail "moved" into it,
			// and the hedge trial lost its forecast).
			if moved := e.hedge.forgetMoved(since, s.hedgeBefore); len(moved) > 0 {
				e.events.add(Event{Type: EventPool, Message: fmt.Sprintf(
					"the pool is back at its pace after the slowdown: the hedge delays' primaries since %s forgotten (%s)",
					since.Format("15:04:05"), strings.Join(moved, "; "))})
			}
		}
	}
	if !pending && s.hedgeDone {
		s.on.Store(false)
	}
}
