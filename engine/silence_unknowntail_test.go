package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// Before an endpoint has answered silenceSamples times its tail is
// unknown, and one request's silence past its first deadline may be that
// tail. A hung endpoint's was, all the same, charged once per attempt:
// ranked behind the others after the first charge, it got few more, and
// with probes off its breaker stayed closed. Its silence counts again once
// a second request of its own was charged a hang within it (a tail is one
// request's), or once it outlasts the cold deadline; one slow answer among
// few, alone and shorter than that, still counts once.
func TestSilence_BeforeTheTailIsKnownASecondSilentRequestOrTheColdDeadlineCounts(t *testing.T) {
	const deadline = 250 * time.Millisecond
	for _, tc := range []struct {
		name    string
		second  bool          // another attempt of a's endpoint, sent after a, charged at its deadline
		silent  time.Duration // a's silence when its further deadline is judged
		charged bool          // the further deadline is charged
	}{
		{"one request silent 750 ms: maybe its tail", false, 750 * time.Millisecond, false},
		{"one request silent 3.25 s, short of the cold deadline", false, 3250 * time.Millisecond, false},
		{"one request silent 3.5 s, past the cold deadline", false, 3500 * time.Millisecond, true},
		{"a second request silent past its deadline too: 500 ms", true, 500 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clock := clockedEngine(t, 3, nil)
			a, b := e.endpoints[0], e.endpoints[1]
			for _, ep := range e.endpoints {
				for range 40 { // short of silenceSamples: its tail unknown
					ep.latency.Record(40 * time.Millisecond)
				}
				ep.heard(clock.Now().Add(-2 * time.Second))
			}
			cold := e.coldDeadline(e.cfg.Server.RequestTimeout)
			if cold != 10*time.Second/3 {
				t.Fatalf("cold deadline %v, the cases assume 3.33s", cold)
			}
			att, start, settled := chargeSilent(a, clock, deadline, tc.second)
			if !settled {
				t.Fatal("settled before its first deadline")
			}
			// stillSilent runs at each deadline: this one is the last of tc.silent.
			passedDeadlines(att, int32(tc.silent/deadline)-1)
			clock.Advance(start.Add(tc.silent).Sub(clock.Now()))
			answerAt(e, b, start.Add(tc.silent-100*time.Millisecond), 40*time.Millisecond)
			before := a.breaker.Info().ConsecutiveFailures
			e.stillSilent(att)
			got := a.breaker.Info().ConsecutiveFailures > before || a.breaker.State() == breaker.Open
			if got != tc.charged {
				t.Fatalf("silent %v (second request %t, 40 answers): charged %v, want %v", tc.silent, tc.second, got, tc.charged)
			}
		})
	}
}
