package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// A hang beside a healthy endpoint with a heavy tail is not a slowdown of
// the pool. Live, with the shipped config's sims (steady hung by a timeout
// fault, tail answering 5 % of reads in 0.4–1.2 s, flaky; 100 reads/s,
// hedge delay 1ms), the hang was "2 of 3 endpoints slow at once (steady,
// tail)": 23 deadlines excused over 1.7 s, and steady's breaker, opened by
// the hang, closed again 166 ms later "the deadlines that opened it were not
// its fault". Tail passed one of its short learnt deadlines while it
// answered the other reads at its pace: its tail, not the moment's.
func TestSlowdown_AHangBesideAHeavyTailIsNotExcused(t *testing.T) {
	const method = "eth_getBalance"
	setup := func(t *testing.T) (*Engine, *endpoint, *endpoint, time.Time, func(time.Duration) time.Time) {
		e, clock := clockedEngine(t, 3, func(c *Config) { c.Breaker.Failures = 1; c.Breaker.Cooldown = time.Minute })
		for _, ep := range e.endpoints {
			for range 50 {
				ep.stats(method).latency.Record(40 * time.Millisecond)
				ep.latency.Record(40 * time.Millisecond)
			}
			ep.heard(clock.Now())
		}
		clock.Advance(time.Millisecond)
		return e, e.endpoints[0], e.endpoints[1], clock.Now(), func(d time.Duration) time.Time { clock.Advance(d); return clock.Now() }
	}

	// steady's own deadline, tail overdue a moment ago (a tail draw) but
	// answering at its pace a read sent after steady's attempt: steady is
	// hung, whatever flaky says (here nothing: out of the pool's traffic).
	t.Run("the-hung-endpoint's-deadline", func(t *testing.T) {
		e, steady, tail, start, advance := setup(t)
		steady.startAttempt(start)
		answerAt(e, tail, start.Add(100*time.Millisecond), 45*time.Millisecond)
		now := advance(250 * time.Millisecond)
		tail.overdueAt.Store(now.Add(-20 * time.Millisecond).UnixNano())
		att := &attempt{ep: steady, deadline: 250 * time.Millisecond, start: start, stats: steady.stats(method)}
		if kind := e.excuse(att, now); kind != "hung" {
			t.Fatalf("steady hung, tail past one deadline but answering a read sent after steady's in 45 ms (its median 40): %q, want hung (%+v)", kind, e.slow.info())
		}
		if info := e.slow.info(); info != nil {
			t.Fatalf("a slowdown episode began: %+v", info)
		}
	})

	// tail's deadline, steady hung for 2 s already, its breaker opened by
	// the hang: tail's deadline is its own, and the open breaker stays open.
	t.Run("the-tail's-deadline", func(t *testing.T) {
		e, steady, tail, start, advance := setup(t)
		steady.startAttempt(start)
		now := advance(2 * time.Second)
		hang := &attempt{ep: steady, deadline: 250 * time.Millisecond, start: now.Add(-300 * time.Millisecond), stats: steady.stats(method)}
		steady.overdueAt.Store(now.Add(-50 * time.Millisecond).UnixNano())
		hang.chargeHang("no answer within the attempt deadline 250ms", now.Add(-50*time.Millisecond), time.Second)
		if steady.breaker.State() != breaker.Open {
			t.Fatalf("steady's breaker %v after its charge", steady.breaker.State())
		}
		tailStart := now.Add(-250 * time.Millisecond)
		answerAt(e, tail, tailStart.Add(30*time.Millisecond), 42*time.Millisecond)
		att := &attempt{ep: tail, deadline: 250 * time.Millisecond, start: tailStart, stats: tail.stats(method)}
		if kind := e.excuse(att, now); kind == "pool" {
			t.Fatalf("tail past one deadline, answering a read sent after it in 42 ms, beside steady silent for 2 s: excused as the pool's (%+v)", e.slow.info())
		}
		if steady.breaker.State() != breaker.Open {
			t.Fatalf("steady's breaker, opened by its hang, is %v after tail's deadline: %+v", steady.breaker.State(), e.Events(0))
		}
	})

	// The whole pool slow at once: steady went quiet within tail's deadline
	// span and every answer since takes ten times its pace. Still the
	// pool's, and steady's charge is taken back.
	t.Run("every-endpoint-ten-times-slower", func(t *testing.T) {
		e, steady, tail, _, advance := setup(t)
		now := advance(2 * time.Second)
		tailStart := now.Add(-250 * time.Millisecond)
		steady.heard(tailStart.Add(-100 * time.Millisecond))
		steady.startAttempt(tailStart.Add(-90 * time.Millisecond))
		hang := &attempt{ep: steady, deadline: 250 * time.Millisecond, start: tailStart.Add(-90 * time.Millisecond), stats: steady.stats(method)}
		steady.overdueAt.Store(now.Add(-50 * time.Millisecond).UnixNano())
		hang.chargeHang("no answer within the attempt deadline 250ms", now.Add(-50*time.Millisecond), time.Second)
		answerAt(e, tail, tailStart.Add(-200*time.Millisecond), 400*time.Millisecond)
		answerAt(e, e.endpoints[2], tailStart.Add(-150*time.Millisecond), 400*time.Millisecond)
		att := &attempt{ep: tail, deadline: 250 * time.Millisecond, start: tailStart, stats: tail.stats(method)}
		if kind := e.excuse(att, now); kind != "pool" {
			t.Fatalf("every endpoint ten times slower: %q, want the pool's", kind)
		}
		if steady.breaker.State() != breaker.Closed {
			t.Fatalf("steady's breaker %v: its charge in a slowdown of the whole pool was not taken back", steady.breaker.State())
		}
		if info := e.slow.info(); info == nil || !strings.Contains(info.Reason, "slow at once") {
			t.Fatalf("episode %+v", info)
		}
	})
}
