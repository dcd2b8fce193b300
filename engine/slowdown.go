package engine

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// A deadline an attempt passes is charged to its endpoint (attemptOverdue)
// unless the slowness is not the endpoint's:
//   - the pool's: most of the endpoints with traffic are slow at the same
//     moment (an attempt of theirs passed its deadline just now, or idle
//     they have said nothing since one last did, or they have had work in
//     flight and said nothing for half of it, or, none answering at its
//     pace, they answered as late as the deadline passed, within their
//     own), and none of the
//     others answers at its usual pace while the attempt's endpoint says
//     nothing. One endpoint
//     cannot be blamed for what all of them do at once; a shared upstream
//     incident must not empty the pool by opening every breaker together.
//   - rpcdash's own: more client requests in flight than hedge.max_inflight,
//     or the process itself stalled (its scheduling lag, measured by a
//     ticker that notes how late it wakes, reached half the deadline within
//     the attempt's life; or the deadline's own timer fired that late),
//     unless another endpoint answered at its pace after the stall while
//     the attempt's endpoint said nothing (hungThroughStall).
//
// Such a stretch is a slowdown episode: an event when it starts, one when it
// ends saying how slow and for how long, and a Snapshot field meanwhile.

// slowQuiet is how long without an excused deadline ends an episode.
const slowQuiet = time.Second

type slowdown struct {
	mu sync.Mutex
	episode
}

type episode struct {
	active bool
	kind   string // "pool" or "self"
	why    string
	first  time.Time
	// onset: when the attempt whose deadline began the episode was sent;
	// the slowdown was on by then.
	onset   time.Time
	last    time.Time
	worst   time.Duration
	excused int64
}

// SlowdownInfo is the slowdown episode in progress, in the Snapshot.
type SlowdownInfo struct {
	Kind    string // "pool": the endpoints at once; "self": rpcdash's own process
	Reason  string
	Since   time.Time
	Worst   time.Duration // the slowest excused attempt so far
	Excused int64         // deadlines passed and not charged to any breaker
	Last    time.Time     // the latest excused deadline (the episode ends slowQuiet after it)
}

// excuse says whether an attempt that passed its deadline at now is not its
// endpoint's fault: "self" (rpcdash was the slow part) or "pool" (most of
// the pool was slow at once), "" when it is the endpoint's, and "hung" when
// it is though the pool or rpcdash looked slow, another endpoint answering
// at its pace meanwhile (poolSlow, hungThroughStall). It notes the episode
// when it is not the endpoint's.
func (e *Engine) excuse(a *attempt, now time.Time) string {
	kind, why := e.selfSlow(a, now)
	switch {
	case kind == "":
		kind, why = e.poolSlow(a, now)
	case e.hungThroughStall(a, now):
		kind = "hung"
	}
	if kind == "" && e.slow.startedIn(a) {
		return "pool"
	}
	if kind == "self" || kind == "pool" {
		e.slow.note(e, kind, why, now, now.Sub(a.start))
		e.forgive(a, now, kind, slowTitle(kind)+": "+why)
	}
	return kind
}

// forgive takes back the deadlines charged to breakers since a, the
// attempt that revealed a slowdown, started: endpoints with shorter
// deadlines pass theirs first, before the slowdown is seen for what it is,
// and a breaker one of those charges opened closes again. A stall of
// rpcdash's own takes back no charge of an endpoint silent through it while
// another answered at its pace after it (silentThroughStall): the stall hid
// none of its answers. It did: a hung endpoint's open breaker closed again
// when another endpoint, answering, had one of its attempts excused by the
// stall.
func (e *Engine) forgive(a *attempt, now time.Time, kind, why string) {
	s := a.start.UnixNano()
	for _, ep := range e.endpoints {
		if ep.hangAt.Load() < s || kind == "self" && e.silentThroughStall(ep, a, now) || kind == "pool" && (e.hungBefore(ep, a) || e.outlastedSinceHang(ep, now)) {
			continue
		}
		if ep.hangOpenedAt.Load() >= s {
			ep.breaker.Revert(a.start, "the deadlines that opened it were not its fault ("+why+")")
		} else if ep.breaker.State() == breaker.Closed {
			ep.breaker.Revert(a.start, "")
		}
	}
}

// selfSlow: rpcdash's own process is the slow part. At a further deadline
// of one attempt's silence (silence.go) only a stall since the deadline
// before excuses it: that one was judged already, and a stall of 188 ms,
// seconds into a hung endpoint's silence, excused every later deadline of
// it while reads answered elsewhere (its breaker closed 5 s on).
func (e *Engine) selfSlow(a *attempt, now time.Time) (kind, why string) {
	late := now.Sub(a.due()) // the deadline's own timer
	span := now.Sub(a.start)
	if a.passed.Load() > 1 {
		span = min(span, late+a.deadline)
	}
	return e.overloaded(a.ep, span, a.stallLimit(), late)
}

// stallLimit is the stall of rpcdash's own that excuses a's silence: half
// the deadline it is judged at. A cold endpoint raced at a borrowed
// deadline (250 ms) is judged at its cold one (1.67 s under a 5 s request
// deadline): excused by half the borrowed one, a hung endpoint's charges
// went to the busy machine's stalls of 137 and 188 ms, which explain no
// 1.67 s of silence, and its breaker stayed closed after the three reads
// that met it (judgeBorrowed).
func (a *attempt) stallLimit() time.Duration {
	if a.judged.Load() {
		return a.judgeDeadline() / 2
	}
	return a.deadline / 2
}

// overloaded says whether rpcdash itself is too slow to judge ep by its
// timing: past its in-flight limit with requests that are not waiting on ep
// (a hung endpoint piles requests up: that is its fault, not an overload),
// or stalled for at least limit within the last span (late: a stall the
// caller measured itself).
func (e *Engine) overloaded(ep *endpoint, span, limit, late time.Duration) (kind, why string) {
	return e.overloadedBy(ep, span, limit, late, e.lag.lostWithin(span))
}

// overloadedBy is overloaded with lost, the run-queue waits and stalls
// that add up within span, in place of lostWithin's.
func (e *Engine) overloadedBy(ep *endpoint, span, limit, late, lost time.Duration) (kind, why string) {
	if n, max := e.inflight.Load(), int64(e.cfg.Hedge.MaxInflight); n-ep.inflight.Load() > max {
		return "self", fmt.Sprintf("rpcdash has %d requests in flight, past hedge.max_inflight %d", n, max)
	}
	if lag := max(late, e.lag.within(span), lost); lag >= limit {
		return "self", fmt.Sprintf("rpcdash itself stalled for %s (scheduling lag)", lag.Round(time.Millisecond))
	}
	return "", ""
}

// hungThroughStall says whether a's endpoint, though rpcdash stalled
// within a's life, is hung all the same: it has said nothing since a
// started, while another endpoint answered at its pace a request sent
// after the stall was over. The stall hid no answer of a's endpoint, and
// excused, a hang beside a busy machine's stalls was neither charged nor
// ranked last: a hung endpoint kept getting first reads beside 4 busy
// loops on 2 cores. rpcdash past its in-flight limit stays excused.
func (e *Engine) hungThroughStall(a *attempt, now time.Time) bool {
	return e.silentThroughStall(a.ep, a, now)
}

// silentThroughStall says whether ep has said nothing since a started,
// while another endpoint answered at its pace a request of a's method sent
// after the stall within a's life was over.
func (e *Engine) silentThroughStall(ep *endpoint, a *attempt, now time.Time) bool {
	if n := e.inflight.Load(); n-ep.inflight.Load() > int64(e.cfg.Hedge.MaxInflight) {
		return false
	}
	if ep.heardAt.Load() >= a.start.UnixNano() {
		return false
	}
	limit := a.stallLimit()
	if now.Sub(a.due()) >= limit {
		return false // the deadline's own timer was late: the stall is just over
	}
	since := a.start
	if ago, ok := e.lag.stallEnded(now.Sub(a.start), limit); ok && now.Add(-ago).After(since) {
		since = now.Add(-ago)
	}
	for _, other := range e.endpoints {
		if other != ep && !other.refusing.Load() && other.answersClients() && other.answeredAtPace(a.method(), since) {
			return true
		}
	}
	return false
}

// method is the method a's windows are kept under ("" without any).
func (a *attempt) method() string {
	if a.stats == nil {
		return ""
	}
	return a.stats.method
}

// stallSlack is how late a timer may fire on a busy machine before its
// lateness says the process stalled.
const stallSlack = 5 * time.Millisecond

// stillOverloaded says whether rpcdash is still too slow to judge a's
// endpoint, a deadline after an overdue read's race was held back: a
// stall (the ticker woke late by half a deadline) or past its in-flight
// limit. Run-queue waits that only add up to it (a process short of CPU,
// not stopped: lostWithin) held the race at the deadline once; they do
// not hold it again. The process ran through that deadline and would have
// read an answer waiting for it, and held look after look, a read beside
// 2 busy loops waited 1.3 s for a race its other endpoint answered in
// 52 ms.
func (e *Engine) stillOverloaded(a *attempt) bool {
	kind, _ := e.overloadedBy(a.ep, a.deadline, a.deadline/2, 0, 0)
	return kind != ""
}

// poolSlow: most endpoints with traffic are slow at once, each by its own
// measure: another endpoint is silent when it has said nothing for half its
// own deadline, not half a's. An endpoint whose answers take a second now
// and then is not slow for being quiet for half of a fast endpoint's 250 ms
// deadline: counted so, it made a hung endpoint beside it look like "2 of 3
// endpoints slow at once", and the hang went uncharged.
//
// A slowdown is endpoints answering late, not answering nothing: a's
// endpoint, silent since a started, is "hung", not slow with the pool, when
// another endpoint answered at its usual pace after a was sent, a request
// sent after it or in flight then (answeredAtPaceAcross). Counted with the
// pool, two hung endpoints of three were "2 of 3 endpoints slow at once" on
// every deadline: no breaker opened, and only the suspect mark kept them
// from first reads.
//
// An endpoint slow within its deadline is slow all the same: one that
// answered since a was sent past its usual pace, in no less than a's
// deadline (answeredLateAcross, any method), is slow at once with a's when
// no endpoint answered a's method at its pace meanwhile. Deadlines differ (a quick,
// steady endpoint's is the 250 ms floor, one with a tail has three times
// its p99): a slowdown of 325 ms passed only the floor's, the others
// answered every read late within theirs and were neither overdue nor
// silent, and the endpoint with the floor, as slow as they were, was
// charged alone and opened. Answers late but quicker than a's deadline
// say a's endpoint is worse: 70 ms answers (11 ms at best) of a loaded
// machine beside one slowed to 510 ms excused it.
func (e *Engine) poolSlow(a *attempt, now time.Time) (kind, why string) {
	window := a.deadline
	active := 0
	var slow, late []string
	var answering *endpoint
	for _, ep := range e.endpoints {
		if ep.refusing.Load() || !ep.answersClients() {
			continue
		}
		// Overdue a moment ago, or idle and silent since its last deadline
		// passed unanswered: a whole pool hung with only probes to show it
		// has nothing in flight between their rounds, and a probe sent off
		// the round was counted as its endpoint's alone. A live idle
		// endpoint is heard again by its next probe; one with work in
		// flight is judged by its silence (below).
		lastDue := ep.overdueAt.Load()
		overdue := now.Sub(time.Unix(0, lastDue)) < window ||
			lastDue > ep.heardAt.Load() && ep.inflight.Load() == 0
		silent := false
		if quiet := ep.silentFor(now); quiet >= window/2 && ep != a.ep {
			// Before its answers say how slow it is, a's deadline is the measure.
			own, src := e.endpointDeadline(ep)
			if src == deadlineCold {
				own = window
			}
			silent = quiet >= max(window, own)/2
		}
		heard := now.Sub(time.Unix(0, ep.heardAt.Load())) < slowQuiet
		if (overdue || silent) && (e.hungBefore(ep, a) || e.outlastedSinceHang(ep, now)) {
			overdue, silent = false, false // hung since before a's moment (hungbeside.go)
		}
		switch {
		case ep == a.ep || overdue || silent:
			slow = append(slow, ep.Name)
			active++
		case heard || ep.inflight.Load() > 0:
			active++
			switch {
			case ep.answeredAtPaceAcross(a.method(), a.start):
				if answering == nil {
					answering = ep
				}
			case ep.answeredLateAcross(a.start, window):
				late = append(late, ep.Name)
			}
		}
	}
	if answering == nil {
		answering = e.answeringSince(a, nil) // one in its tail answers all the same
	}
	if answering == nil {
		slow = append(slow, late...)
	}
	if len(slow) < 2 || 2*len(slow) <= active {
		return "", ""
	}
	if answering != nil && !a.ep.heardSince(a.start) {
		return "hung", fmt.Sprintf("%s silent while %s answers at its pace", a.ep.Name, answering.Name)
	}
	since := a.ep.silentSince(a)
	if other, took := e.outlasted(a.ep, since, now, a.method()); other != nil {
		return "hung", fmt.Sprintf("%s silent for %s while %s answered a request sent since in %s", a.ep.Name,
			now.Sub(since).Round(time.Millisecond), other.Name, took.Round(time.Millisecond))
	}
	return "pool", fmt.Sprintf("%d of %d endpoints slow at once (%s)", len(slow), active, strings.Join(slow, ", "))
}

// note counts an excused deadline in the episode, starting one (and an
// event) if none is on.
func (s *slowdown) note(e *Engine, kind, why string, now time.Time, ran time.Duration) {
	s.mu.Lock()
	start := !s.active
	if start {
		s.episode = episode{active: true, kind: kind, why: why, first: now, onset: now.Add(-ran)}
	}
	s.last = now
	s.worst = max(s.worst, ran)
	s.excused++
	s.mu.Unlock()
	if kind == "pool" {
		e.after.noted(e, now, false)
	}
	if start {
		e.events.add(Event{Type: EventPool, From: "normal", To: "slow",
			Message: slowTitle(kind) + ": " + why + "; deadlines passed meanwhile are not charged to any breaker"})
	}
}

// startedIn says whether a started while the pool was slow at once (the
// episode in progress or the last one, from when the attempt whose
// deadline began it was sent to its last excused deadline), its endpoint
// answering then (heard within a deadline of the episode's start, or
// since): its deadline passing is that slowdown's, though it
// passes after the others have come back to their pace. Judged by the
// moment the deadline passes alone, an endpoint whose attempts were sent
// in a slowdown of 325 ms was charged alone once the others answered new
// requests at pace, and its breaker opened after the slowdown was over.
// Sent before the first excused deadline, one deadline of 1.35 s, longer
// than the others', passed after the slowdown and was charged (stop 57).
// It is counted among the episode's excused deadlines but moves neither
// end: attempts started in it would otherwise keep
// extending it, and a hang right after it would never be charged. One
// silent since before the episode began is hung, not slowed by it.
func (s *slowdown) startedIn(a *attempt) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kind != "pool" || s.first.IsZero() || a.start.Before(s.onset) || a.start.After(s.last) {
		return false
	}
	if a.ep.heardAt.Load() < s.first.Add(-a.deadline).UnixNano() {
		return false
	}
	if s.active {
		s.excused++
	}
	return true
}

// observe notes how long an excused attempt took in the end.
func (s *slowdown) observe(d time.Duration) {
	s.mu.Lock()
	if s.active {
		s.worst = max(s.worst, d)
	}
	s.mu.Unlock()
}

// settle ends the episode once no deadline has been excused for slowQuiet.
func (s *slowdown) settle(e *Engine, now time.Time) {
	s.mu.Lock()
	if !s.active || now.Sub(s.last) < slowQuiet {
		s.mu.Unlock()
		return
	}
	ep := s.episode
	s.active = false
	s.mu.Unlock()
	e.events.add(Event{Type: EventPool, From: "slow", To: "normal",
		Message: fmt.Sprintf("%s: %s for %s; %d deadlines passed, none charged to a breaker (%s)",
			slowTitle(ep.kind), ep.worst.Round(time.Millisecond), ep.last.Sub(ep.first).Round(time.Millisecond), ep.excused, ep.why)})
}

func (s *slowdown) info() *SlowdownInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.active {
		return nil
	}
	return &SlowdownInfo{Kind: s.kind, Reason: s.why, Since: s.first, Worst: s.worst, Excused: s.excused, Last: s.last}
}

func slowTitle(kind string) string {
	if kind == "self" {
		return "rpcdash itself slow"
	}
	return "every endpoint slow at once"
}

// lagMonitor measures rpcdash's own scheduling lag: a ticker that notes how
// late it wakes. It keeps the last lagSamples lateness readings.
type lagMonitor struct {
	mu sync.Mutex
	// ticks are the ticker's latenesses, queued the run-queue waits
	// probeQueue noted (ownstall.go).
	ticks, queued lagRing
	// woke is when the ticker last woke, and stallAt when a lateness or a
	// wait of stallSlack or more was last noted (unix nanos, 0: never):
	// lostWithin reads them without the lock (ownstall.go).
	woke, stallAt atomic.Int64
	// runQueue: how long runnable goroutines have lately waited for a CPU.
	runQueue runQueue
}

type lagSample struct {
	at   time.Time
	late time.Duration
}

// lagRing keeps the last lagSamples readings of one kind.
type lagRing struct {
	samples [lagSamples]lagSample
	next    int
}

const (
	lagPeriod  = 20 * time.Millisecond
	lagSamples = 128 // about 2.5 s of readings
)

func (m *lagMonitor) add(at time.Time, late time.Duration) { m.note(&m.ticks, at, late) }

// note keeps a reading in ring, and when it is a stall (stallSlack or
// more) when it was.
func (m *lagMonitor) note(ring *lagRing, at time.Time, late time.Duration) {
	if late >= stallSlack {
		m.stallAt.Store(at.UnixNano())
	}
	m.mu.Lock()
	ring.samples[ring.next] = lagSample{at, late}
	ring.next = (ring.next + 1) % lagSamples
	m.mu.Unlock()
}

// within is the largest lateness noted in the last d.
func (m *lagMonitor) within(d time.Duration) time.Duration {
	since := time.Now().Add(-d)
	m.mu.Lock()
	defer m.mu.Unlock()
	var worst time.Duration
	for _, s := range m.ticks.samples {
		if s.at.After(since) {
			worst = max(worst, s.late)
		}
	}
	return worst
}

// stallEnded is how long ago the last stall of at least limit noted in
// the last d ended; false when there was none.
func (m *lagMonitor) stallEnded(d, limit time.Duration) (time.Duration, bool) {
	now := time.Now()
	since := now.Add(-d)
	m.mu.Lock()
	defer m.mu.Unlock()
	var end time.Time
	for _, s := range m.ticks.samples {
		if s.at.After(since) && s.late >= limit && s.at.After(end) {
			end = s.at
		}
	}
	return now.Sub(end), !end.IsZero()
}

// watch runs the lag monitor and the engine's periodic upkeep (ending
// slowdown episodes, leaving panic routing, resuming paused hedging,
// telling failovers folded into a quiet second) until stop closes.
func (e *Engine) watch(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	queueDone := make(chan struct{})
	go e.lag.probeQueue(stop, queueDone)
	defer func() { <-queueDone }()
	t := time.NewTicker(lagPeriod)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			// The ticker drops ticks it could not deliver: measure from the
			// last wake-up, not from the tick's own time.
			woke := time.Now()
			if late := woke.Sub(last) - lagPeriod; late > 0 {
				e.lag.add(woke, late)
			}
			e.lag.woke.Store(woke.UnixNano())
			if msg := e.answers.reap(woke); msg != "" {
				e.events.add(Event{Type: EventServer, Message: msg})
			}
			e.lag.runQueue.read()
			last = woke
			e.slow.settle(e, e.now())
			e.notePaces(e.now())
			e.after.check(e, e.now())
			e.settleOpenCap(e.now())
			e.hedge.recheckPause(e.inflight.Load())
			e.flushFailovers(e.now())
			// One count of the pool serves panic routing and the standbys.
			now := e.now()
			routable, pool, prim := e.poolRoutable(now)
			e.decidePanic(routable, pool, now)
			e.settleStandby(now, prim)
		}
	}
}
