package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// A hung endpoint beside a pool slowed as a whole is hung, not slow with
// it: the others answer, late, and it says nothing at all. Outside, with a
// hung and b and c 2 s slower (probes every 5 s, 2 s probe deadlines), a's
// breaker opened, and the next probe round's deadlines, "3 of 3 endpoints
// slow at once (a, b, c)", took its charges back: a stayed closed, hung,
// for 22 to 41 s, and writes sent to it waited out the 10 s request
// deadline where b and c answered them in 2 s.
func TestSlowdown_AHangOutlastingASlowPoolIsNotTheSlowdowns(t *testing.T) {
	const method = "eth_getBalance"
	setup := func(t *testing.T) (e *Engine, a, b, c *endpoint, hungAt time.Time, advance func(time.Duration) time.Time) {
		e, clock := clockedEngine(t, 3, func(c *Config) { c.Breaker.Cooldown = time.Minute })
		for _, ep := range e.endpoints {
			for range 50 {
				ep.stats(method).latency.Record(40 * time.Millisecond)
				ep.latency.Record(40 * time.Millisecond)
			}
			ep.heard(clock.Now())
		}
		clock.Advance(time.Millisecond)
		return e, e.endpoints[0], e.endpoints[1], e.endpoints[2], clock.Now(), func(d time.Duration) time.Time { clock.Advance(d); return clock.Now() }
	}
	// b and c answer every request 2 s late from hungAt on.
	answerLate := func(e *Engine, from, to time.Time, eps ...*endpoint) {
		for sent := from; !sent.Add(2 * time.Second).After(to); sent = sent.Add(200 * time.Millisecond) {
			for _, ep := range eps {
				answerAt(e, ep, sent, 2*time.Second)
			}
		}
	}

	t.Run("its-breaker-stays-open", func(t *testing.T) {
		e, a, b, c, hungAt, advance := setup(t)
		a.startAttempt(hungAt)
		// a's silence charged three times over 4.5 s: its breaker opens.
		for i := range 3 {
			now := advance(1500 * time.Millisecond)
			att := &attempt{ep: a, deadline: 250 * time.Millisecond, start: hungAt.Add(time.Duration(i) * time.Second), stats: a.stats(method)}
			att.chargeHang("no answer within the attempt deadline 250ms", now, time.Minute)
		}
		if a.breaker.State() != breaker.Open {
			t.Fatalf("a's breaker %v after three charges", a.breaker.State())
		}
		now := advance(500 * time.Millisecond) // 5 s into a's silence
		answerLate(e, hungAt, now, b, c)
		// A probe of b, sent 2.5 s ago, passes its deadline unanswered, and c
		// was overdue a moment ago too.
		c.overdueAt.Store(now.Add(-20 * time.Millisecond).UnixNano())
		b.startAttempt(now.Add(-2500 * time.Millisecond))
		probe := &attempt{ep: b, deadline: 2 * time.Second, start: now.Add(-2500 * time.Millisecond), stats: b.stats(method)}
		if kind := e.excuse(probe, now); kind != "pool" {
			t.Fatalf("b past its deadline with c overdue beside it: %q, want the pool's (b and c slow at once)", kind)
		}
		if a.breaker.State() != breaker.Open {
			t.Fatalf("a, silent for 5 s while b and c answered requests sent since in 2 s, had its breaker closed by their slowdown: %+v", e.Events(0))
		}
	})

	// a silent for silence while b and c answer 2 s late, just overdue:
	// what excuse makes of a further deadline of a's silence, judged on time.
	judgeSilence := func(t *testing.T, silence time.Duration) (*Engine, string) {
		e, a, b, c, hungAt, advance := setup(t)
		a.startAttempt(hungAt)
		now := advance(silence)
		answerLate(e, hungAt, now, b, c)
		b.overdueAt.Store(now.Add(-20 * time.Millisecond).UnixNano())
		c.overdueAt.Store(now.Add(-20 * time.Millisecond).UnixNano())
		att := &attempt{ep: a, deadline: 250 * time.Millisecond, start: hungAt, stats: a.stats(method)}
		passedDeadlines(att, int32(now.Sub(hungAt)/att.deadline))
		return e, e.excuse(att, now)
	}

	t.Run("its-silence-is-charged", func(t *testing.T) {
		e, kind := judgeSilence(t, 4500*time.Millisecond)
		if kind != "hung" {
			t.Fatalf("a silent 4.5 s while b and c answered requests sent since in 2 s: %q, want hung", kind)
		}
		if info := e.slow.info(); info != nil {
			t.Fatalf("a slowdown episode began: %+v", info)
		}
	})

	// Slower than the others by less than twice, a is slow with them.
	t.Run("slow-with-the-pool", func(t *testing.T) {
		if _, kind := judgeSilence(t, 3*time.Second); kind != "pool" {
			t.Fatalf("a silent 3 s while b and c answer in 2 s: %q, want the pool's", kind)
		}
	})
}
