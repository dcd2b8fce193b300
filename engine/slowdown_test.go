package engine

import (
	"strings"
	"testing"
	"time"
)

// A deadline passed while rpcdash itself stalled is not the endpoint's: the
// lag monitor's readings over the attempt's life excuse it, and the episode
// is an event with how slow and how long.
func TestSlowdown_OwnStallExcusesTheDeadline(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	ep := e.endpoints[0]
	overdue := func() *attempt {
		a := &attempt{ep: ep, deadline: 250 * time.Millisecond, start: clock.Now().Add(-250 * time.Millisecond)}
		return a
	}
	if e.excuse(overdue(), clock.Now()) != "" {
		t.Fatal("excused with no stall, no overload and the rest of the pool quiet")
	}
	e.lag.add(time.Now(), 40*time.Millisecond)
	if e.excuse(overdue(), clock.Now()) != "" {
		t.Fatal("a 40 ms hiccup excused a 250 ms deadline")
	}
	e.lag.add(time.Now(), 180*time.Millisecond)
	if e.excuse(overdue(), clock.Now()) != "self" {
		t.Fatal("a 180 ms stall of rpcdash itself did not excuse a 250 ms deadline")
	}
	info := e.slow.info()
	if info == nil || info.Kind != "self" || info.Excused != 1 {
		t.Fatalf("episode %+v", info)
	}
	clock.Advance(2 * time.Second)
	e.slow.settle(e, clock.Now())
	evs := e.Events(0)
	if len(evs) != 2 || evs[0].To != "slow" || evs[1].To != "normal" || !strings.Contains(evs[1].Message, "rpcdash itself slow: 250ms") || !strings.Contains(evs[1].Message, "scheduling lag") {
		t.Fatalf("events %+v", evs)
	}
}

// One overdue endpoint beside others that answer is its own problem; beside
// others silent with work in flight, it is the pool's.
func TestSlowdown_PoolMeansMostEndpointsAtOnce(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	a, b, c := e.endpoints[0], e.endpoints[1], e.endpoints[2]
	start := clock.Now()
	for _, ep := range e.endpoints {
		ep.heard(start)
		ep.startAttempt(start)
	}
	clock.Advance(250 * time.Millisecond)
	now := clock.Now()
	att := &attempt{ep: a, deadline: 250 * time.Millisecond, start: start}
	b.heard(now)
	c.heard(now)
	if kind, why := e.poolSlow(att, now); kind != "" {
		t.Fatalf("a slow while b and c answer: %s", why)
	}
	// b and c have had work in flight for the whole deadline and said
	// nothing since: the three are slow together.
	b.heardAt.Store(start.UnixNano())
	c.heardAt.Store(start.UnixNano())
	if kind, why := e.poolSlow(att, now); kind != "pool" || why != "3 of 3 endpoints slow at once (a, b, c)" {
		t.Fatalf("all silent: %q %q", kind, why)
	}
	// With b drained, a and c are the pool; c answering makes a's alone.
	b.drained.Store(true)
	c.heard(now)
	if kind, why := e.poolSlow(att, now); kind != "" {
		t.Fatalf("a slow, c answering, b drained: %s", why)
	}
	// c's attempt passed its deadline a moment ago: 2 of 2.
	c.overdueAt.Store(now.Add(-10 * time.Millisecond).UnixNano())
	if kind, why := e.poolSlow(att, now); kind != "pool" || why != "2 of 2 endpoints slow at once (a, c)" {
		t.Fatalf("a and c overdue: %q %q", kind, why)
	}
}

// Each endpoint is silent by its own measure. Beside a hung endpoint with a
// 250 ms deadline, one whose answers take up to a second now and then
// (its own deadline some 3 s) and has one such answer in flight is not
// slow for 200 ms of quiet: counted so, the hang was "2 of 3 endpoints
// slow at once" and went uncharged (seen live with the shipped config's
// heavy-tail endpoint). Quiet for half its own deadline, it is slow.
func TestSlowdown_EachEndpointIsSilentByItsOwnDeadline(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	hung, fast, heavy := e.endpoints[0], e.endpoints[1], e.endpoints[2]
	for range 100 {
		fast.latency.Record(40 * time.Millisecond)
		heavy.latency.Record(50 * time.Millisecond)
	}
	for range 5 {
		heavy.latency.Record(time.Second)
	}
	if d, src := e.endpointDeadline(heavy); src != deadlineLearned || d < 2*time.Second {
		t.Fatalf("heavy's own deadline %v (%s): want about 3 s, learned", d, src)
	}
	start := clock.Now()
	for _, ep := range e.endpoints {
		ep.heard(start)
	}
	heavy.startAttempt(start)
	clock.Advance(250 * time.Millisecond)
	now := clock.Now()
	fast.heard(now)
	att := &attempt{ep: hung, deadline: 250 * time.Millisecond, start: start}
	if kind, why := e.poolSlow(att, now); kind != "" {
		t.Fatalf("a hung endpoint beside one fast and one quiet for 250 ms of its 3 s deadline: %s", why)
	}
	clock.Advance(1300 * time.Millisecond)
	now = clock.Now()
	fast.heard(now)
	att.start = now.Add(-250 * time.Millisecond)
	if kind, why := e.poolSlow(att, now); kind != "pool" || why != "2 of 3 endpoints slow at once (a, c)" {
		t.Fatalf("heavy quiet for 1.55 s of its 3 s deadline: %q %q, want 2 of 3 slow", kind, why)
	}
}

// Two endpoints of three hung at the same moment are not a slowdown of
// the pool while the third answers at its usual pace requests sent after
// the hung attempt was: each hang is charged at its deadline, as one hung
// endpoint's is. They were "2 of 3 endpoints slow at once": no breaker
// opened, and only the suspect mark kept them from first reads. A pool
// that is slow (the third's answers far past its pace too), or hung
// attempts whose endpoint still answers late, are still excused.
func TestSlowdown_TwoHungEndpointsBesideOneAnsweringAreCharged(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	a, b, c := e.endpoints[0], e.endpoints[1], e.endpoints[2]
	for _, ep := range e.endpoints {
		for range 50 {
			ep.latency.Record(40 * time.Millisecond)
		}
	}
	start := clock.Now()
	for _, ep := range e.endpoints {
		ep.heard(start.Add(-time.Millisecond))
	}
	a.startAttempt(start)
	b.startAttempt(start.Add(5 * time.Millisecond))
	clock.Advance(250 * time.Millisecond)
	now := clock.Now()
	b.overdueAt.Store(now.Add(-5 * time.Millisecond).UnixNano()) // b's hang passed its deadline just now
	answerAt(e, c, start.Add(100*time.Millisecond), 42*time.Millisecond)
	att := &attempt{ep: a, deadline: 250 * time.Millisecond, start: start, stats: a.stats("eth_getBalance")}
	if kind := e.excuse(att, now); kind != "hung" {
		t.Fatalf("a and b hung, c answering in 42 ms (its median 40 ms) a read sent after a's: excused as %q (%+v)", kind, e.slow.info())
	}
	if info := e.slow.info(); info != nil {
		t.Fatalf("a slowdown episode began: %+v", info)
	}

	// The whole pool slow: c's answers to reads sent since take ten times
	// its pace. Still the pool's.
	e2, clock2 := clockedEngine(t, 3, nil)
	for _, ep := range e2.endpoints {
		for range 50 {
			ep.latency.Record(40 * time.Millisecond)
		}
		ep.heard(clock2.Now().Add(-time.Millisecond))
	}
	start = clock2.Now()
	e2.endpoints[0].startAttempt(start)
	e2.endpoints[1].startAttempt(start.Add(5 * time.Millisecond))
	clock2.Advance(450 * time.Millisecond)
	now = clock2.Now()
	e2.endpoints[1].overdueAt.Store(now.Add(-5 * time.Millisecond).UnixNano())
	answerAt(e2, e2.endpoints[2], start.Add(10*time.Millisecond), 400*time.Millisecond)
	att = &attempt{ep: e2.endpoints[0], deadline: 250 * time.Millisecond, start: start, stats: e2.endpoints[0].stats("eth_getBalance")}
	if kind, why := e2.poolSlow(att, now); kind != "pool" || why != "3 of 3 endpoints slow at once (a, b, c)" { // c answering late is slow too
		t.Fatalf("every endpoint ten times slower: %q %q, want the pool's", kind, why)
	}
	// A quick answer of another method proves nothing of this one's.
	quick := &attempt{ep: e2.endpoints[2], start: start.Add(20 * time.Millisecond), deadline: 250 * time.Millisecond, stats: e2.endpoints[2].stats("eth_blockNumber")}
	e2.recordAnswer(quick, 5*time.Millisecond, start.Add(25*time.Millisecond))
	if kind, why := e2.poolSlow(att, now); kind != "pool" {
		t.Fatalf("c answering eth_blockNumber in 5 ms, eth_getBalance ten times slower: %q %q, want the pool's", kind, why)
	}

	// a answers late (heard since its attempt started): slow, not hung.
	answerAt(e2, e2.endpoints[2], start.Add(200*time.Millisecond), 41*time.Millisecond)
	e2.endpoints[0].heard(start.Add(300 * time.Millisecond))
	if kind, why := e2.poolSlow(att, now); kind != "pool" {
		t.Fatalf("a answering late, b overdue: %q %q, want the pool's", kind, why)
	}
}

// answerAt records an answer of ep's to a read sent at start that took took.
func answerAt(e *Engine, ep *endpoint, start time.Time, took time.Duration) {
	a := &attempt{ep: ep, start: start, deadline: 250 * time.Millisecond, stats: ep.stats("eth_getBalance")}
	e.recordAnswer(a, took, start.Add(took))
}

// A stall of rpcdash's own hides no hang that another endpoint's answers
// show after it: a's endpoint said nothing since a started, and c answered
// at its pace a read sent after the stall was over. Excused, a hang beside
// a busy machine's stalls was neither charged nor ranked last, and a hung
// endpoint kept getting first reads (4 busy loops on 2 cores). Without an
// answer after the stall, or with the stall just over, it stays rpcdash's.
func TestSlowdown_StallDoesNotExcuseAHangOthersAnswerAfter(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	a, c := e.endpoints[0], e.endpoints[2]
	for _, ep := range e.endpoints {
		for range 50 {
			ep.latency.Record(40 * time.Millisecond)
		}
		ep.heard(clock.Now().Add(-2 * time.Second))
	}
	start := clock.Now()
	a.startAttempt(start)
	clock.Advance(time.Second)
	now := clock.Now()
	att := &attempt{ep: a, deadline: time.Second, start: start, stats: a.stats("eth_getBalance")}
	// A stall of 600 ms that ended 500 ms ago, c's answer to a read sent
	// 700 ms ago (during it) and took 45 ms: no proof.
	e.lag.add(time.Now().Add(-500*time.Millisecond), 600*time.Millisecond)
	answerAt(e, c, now.Add(-700*time.Millisecond), 45*time.Millisecond)
	if kind := e.excuse(att, now); kind != "self" {
		t.Fatalf("c's only answer was sent during the stall: %q, want self", kind)
	}
	// c answers a read sent 250 ms ago, after the stall, in 42 ms.
	answerAt(e, c, now.Add(-250*time.Millisecond), 42*time.Millisecond)
	if kind := e.excuse(att, now); kind != "hung" {
		t.Fatalf("a silent for its whole deadline, c answering at its pace after the stall: %q, want hung", kind)
	}
	// The deadline's own timer fired 600 ms late: the stall is just over.
	late := &attempt{ep: a, deadline: time.Second, start: now.Add(-1600 * time.Millisecond), stats: a.stats("eth_getBalance")}
	if kind := e.excuse(late, now); kind != "self" {
		t.Fatalf("deadline timer 600 ms late: %q, want self", kind)
	}
}
