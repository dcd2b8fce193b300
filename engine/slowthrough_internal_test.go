package engine

import (
	"strings"
	"testing"
	"time"
)

// A slowdown of the whole pool that ended while the reads sent in it were
// on their way: one endpoint answers a fresh read at its pace. It was slow
// at the moment the overdue attempt was sent too (its own attempts of
// then passed their deadlines), so its answer shows the slowdown over, not
// the overdue attempt's endpoint hung. An endpoint that answered at its
// pace through that moment, a tail of its own beside, is proof still.
func TestSlowAt_AnAnswerAfterTheSlowdownEndedIsNoProofOfAHang(t *testing.T) {
	const method = "eth_getBalance"
	for _, tc := range []struct {
		name      string
		atPaceToo bool // b also answered at its pace a read in flight when a was sent
		want      string
	}{
		{"slow-then", false, "pool"},
		{"a-tail-beside-answers-at-pace", true, "hung"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clock := clockedEngine(t, 3, nil)
			T := clock.Now()
			at := func(ms int) time.Time { return T.Add(time.Duration(ms) * time.Millisecond) }
			for _, ep := range e.endpoints {
				recordAnswers(ep, 20*time.Millisecond, 50)
				ep.stats(method)
				ep.answers.add(method, at(-5), 20*time.Millisecond)
				ep.heard(at(20))
			}
			a0, b, c := e.endpoints[0], e.endpoints[1], e.endpoints[2]
			// The slowdown (+325 ms) from T to T+325: every attempt sent
			// in it is on its way; a's and c's have not answered since.
			a0.startAttempt(at(48))
			c.startAttempt(at(40))
			c.overdue.add(at(140), at(390))
			c.overdueAt.Store(at(390).UnixNano())
			b.startAttempt(at(30))
			b.overdue.add(at(100), at(350))
			b.overdue.add(at(150), at(400))
			b.overdueAt.Store(at(400).UnixNano())
			if tc.atPaceToo {
				b.answers.add(method, at(150), 20*time.Millisecond)
				b.answers.add(method, at(60), 600*time.Millisecond)
			}
			// Over: a read sent to b at T+380 answered at its pace.
			b.answers.add(method, at(380), 20*time.Millisecond)
			b.heard(at(400))
			a := &attempt{ep: a0, start: at(155), deadline: 250 * time.Millisecond, stats: a0.stats(method)}
			clock.Advance(405 * time.Millisecond)
			kind, why := e.poolSlow(a, clock.Now())
			if kind != tc.want {
				t.Fatalf("a's deadline at T+405: %q (%s); want %q", kind, why, tc.want)
			}
			if kind == "pool" && !strings.Contains(why, "3 of 3") {
				t.Fatalf("pool: %s; want 3 of 3 endpoints slow", why)
			}
			t.Logf("%s: %s", kind, why)
		})
	}
}
