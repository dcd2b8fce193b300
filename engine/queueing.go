package engine

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// Hedging's queue guard: a hedge buys a second, independent draw of an
// endpoint's latency. When most endpoints are slower than usual at once,
// the likely cause is load (their queues, or one link they share), and a
// duplicate only joins a queue: the extra load can push endpoints near their
// capacity past it, and the queue then grows without bound (bench, three
// endpoints of 40 req/s at 117 req/s: hedging at p95 took the offered load
// from 0.98 to 1.07 of capacity and the median from 59 ms to 1.1 s). The
// tail-geometry seed asks a hedging policy for such a switch-off condition,
// observable fast: an endpoint's median over the last queueSpan against the
// lowest such median it had over the last queueBaseSpan (its latency
// without a queue, as TCP Vegas's base RTT and BBR's min RTT filter keep
// it; the median over the whole stats window would rise with a queue that
// grew all along). Medians, so that the tail hedging exists for moves
// neither. The base may rise because clients change what they ask: a
// switch from eth_blockNumber polling to eth_getLogs raises every
// endpoint's median at once with no queue, and pauses hedging until the
// base gives way. It gives way only once the guard has held one verdict for
// queueBaseSpan: a pause that long without the medians coming down is no
// queue that hedging feeds. While the guard flips (hedges fill the queue, a
// pause drains it, they resume before it is empty), the medians it sees are
// the queue's, and a base rising to them would loosen the guard with every
// span until the queue grew without bound (3 × 40 req/s at 119 req/s for
// 90 s: median 1 s against 75 ms with hedging off).
const (
	queueSpan    = 2 * time.Second
	queueBuckets = 4
	// queueMinRecent: answers an endpoint needs in the last queueSpan to be
	// judged at all, or to set its base.
	queueMinRecent = 10
	// queueMinRise keeps a few milliseconds on a fast endpoint from counting.
	queueMinRise = 20 * time.Millisecond
	// queueCheckEvery bounds how often the windows are read: the guard is
	// asked before every hedge.
	queueCheckEvery = 100 * time.Millisecond
)

// queueBaseSpan is how long a base holds (a variable for the tests).
var queueBaseSpan = 30 * time.Second

func newQueueWindow(now func() time.Time) *window.Latency {
	return window.NewLatency(queueSpan, queueBuckets, now)
}

// queueGuard caches the queue verdicts for queueCheckEvery, and keeps each
// endpoint's base.
type queueGuard struct {
	mu      sync.Mutex
	checked time.Time
	pause   string // why hedges would queue at the pause ratio, "" if not
	resume  string // the same at the resume ratio
	bases   []queueBase
	// paused is the guard's own verdict with its hysteresis (pause, then
	// resume below the lower ratio), flipped when it last changed.
	paused  bool
	flipped time.Time
}

// queueBase is the lowest recent median an endpoint had, and when: one
// older than queueBaseSpan gives way when the guard has not flipped for as
// long, so that an endpoint that became slower for good (or is asked
// heavier calls) is judged by its new pace: to the lowest median of the
// last queueBaseSpan (lows, one per third of it), not the current one,
// which a queue growing slowly all that time would have raised.
type queueBase struct {
	median time.Duration
	at     time.Time
	lows   [3]queueLow
}

type queueLow struct {
	slot   int64 // which third of a queueBaseSpan, counted from the epoch
	median time.Duration
}

// note keeps r among the lows of now's third of the span.
func (b *queueBase) note(r time.Duration, now time.Time) {
	slot := now.UnixNano() / int64(queueBaseSpan/3)
	l := &b.lows[slot%3]
	if l.slot != slot || r < l.median {
		*l = queueLow{slot: slot, median: r}
	}
}

// lowest is the lowest median noted in the last queueBaseSpan; whole says
// every third of it noted one. A span with a lull in it says nothing of the
// pace before the lull: after 40 s idle the only low was the first median
// seen, already the slowdown's, and the base gave way to it.
func (b *queueBase) lowest(now time.Time) (low time.Duration, whole bool) {
	slot := now.UnixNano() / int64(queueBaseSpan/3)
	whole = true
	for _, l := range b.lows {
		if slot-l.slot >= 3 {
			whole = false
			continue
		}
		if low == 0 || l.median < low {
			low = l.median
		}
	}
	return low, whole
}

// queueing says why hedging should not run, "" when it may: at ratio
// hedge.pause_latency_ratio (the pause threshold), or, with resume, at
// halfway between 1 and it (the threshold hedging resumes below).
func (e *Engine) queueing(resume bool) string {
	ratio := e.cfg.Hedge.PauseLatencyRatio
	if ratio == 0 {
		return ""
	}
	g := &e.queue
	g.mu.Lock()
	defer g.mu.Unlock()
	if now := e.now(); now.Sub(g.checked) >= queueCheckEvery {
		g.checked = now
		g.pause, g.resume = e.queueVerdicts(now, ratio, 1+(ratio-1)/2)
		if g.paused && g.resume == "" || !g.paused && g.pause != "" {
			g.paused, g.flipped = !g.paused, now
		}
		if g.pause != "" {
			// Most endpoints slow at once is a pool slowdown, whether or
			// not its answers pass a deadline: noted as an excused
			// deadline notes one, so that its answers are forgotten once
			// the endpoints are back at their pace. Three 40 ms endpoints
			// slowed to 200 ms, under the 250 ms deadline floor, left every
			// auto hedge delay at 214 ms for five minutes (aftermath audit,
			// stop 55).
			e.after.noted(e, now, true)
		}
	}
	if resume {
		return g.resume
	}
	return g.pause
}

// queueVerdicts judges the endpoints at the pause and resume ratios,
// updating their bases (under the guard's mu).
func (e *Engine) queueVerdicts(now time.Time, pauseRatio, resumeRatio float64) (pause, resume string) {
	g := &e.queue
	if g.bases == nil {
		g.bases = make([]queueBase, len(e.endpoints))
	}
	var judged []queuePace
	for i, ep := range e.endpoints {
		if ep.isShadow() {
			continue
		}
		r, n := ep.queueLatency.AnswerQuantile(0.5)
		if n < queueMinRecent {
			continue
		}
		b := &g.bases[i]
		b.note(r, now)
		switch {
		case b.at.IsZero() || r <= b.median:
			b.median, b.at = r, now
		case now.Sub(b.at) > queueBaseSpan && now.Sub(g.flipped) >= queueBaseSpan:
			if low, whole := b.lowest(now); whole {
				b.median, b.at = low, now
			}
		}
		judged = append(judged, queuePace{ep.Name, r, b.median})
	}
	return queueVerdict(judged, pauseRatio), queueResumeVerdict(judged, resumeRatio)
}

// queueResumeVerdict is queueVerdict at the resume ratio, except that a pool
// of which only one endpoint answered queueMinRecent times in the last
// queueSpan, and that one still slow, holds the pause: it is no evidence the
// queue has drained. Reads go mostly to the fastest endpoint, so in a pool
// slowdown the others often fall short of queueMinRecent answers; judging
// that one alone resumed hedging, and the next endpoints heard paused it
// again (every endpoint 20× slower for 30 s at 20 reads/s: 37 pauses and
// resumes, hedges fired into the slow pool between them).
func queueResumeVerdict(judged []queuePace, ratio float64) string {
	if why := queueVerdict(judged, ratio); why != "" || len(judged) != 1 || !judged[0].slowAt(ratio) {
		return why
	}
	p := judged[0]
	return fmt.Sprintf("%s answers at %.3g× its best recent median or slower (%s, at best %s), and no other endpoint answered %d times in the last %s: a duplicate would still queue",
		p.name, ratio, p.recent.Round(time.Millisecond), p.base.Round(time.Millisecond), queueMinRecent, queueSpan)
}

// queuePace is an endpoint's recent median beside its base.
type queuePace struct {
	name         string
	recent, base time.Duration
}

// slowAt says whether its recent median is at least ratio × its base, and
// queueMinRise more.
func (p queuePace) slowAt(ratio float64) bool {
	return float64(p.recent) >= ratio*float64(p.base) && p.recent-p.base >= queueMinRise
}

// queueVerdict names the endpoints whose recent median is at least ratio ×
// their base (and queueMinRise more) when they are most of those judged,
// at least two; "" otherwise.
func queueVerdict(judged []queuePace, ratio float64) string {
	var slow []string
	for _, p := range judged {
		if p.slowAt(ratio) {
			slow = append(slow, fmt.Sprintf("%s %s (at best %s)", p.name, p.recent.Round(time.Millisecond), p.base.Round(time.Millisecond)))
		}
	}
	if len(slow) < 2 || 2*len(slow) <= len(judged) {
		return ""
	}
	return fmt.Sprintf("%d of %d endpoints answer at %.3g× their best recent median or slower at once (%s): a duplicate would queue behind the others",
		len(slow), len(judged), ratio, strings.Join(slow, ", "))
}
