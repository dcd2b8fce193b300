package engine

import (
	"strings"
	"testing"
	"time"
)

// A fault run out whose timer has not fired yet ends when another is
// injected over it, as its timer would have ended it: its event is said
// and its breaker forgiven. Swapped out silently, its opens stayed
// charged and its 429 back-offs stayed on (review of stop 57).
func TestFault_ARunOutFaultReplacedBeforeItsTimerEndsAsIfExpired(t *testing.T) {
	e, clock := clockedEngine(t, 2, nil)
	ep := e.endpoints[0]
	if err := e.InjectFault(ActorAdmin, "a", FaultSpec{Mode: FaultError, Duration: Duration(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	for range e.cfg.Breaker.Failures {
		ep.breaker.Failure(false, "injected fault: HTTP 500")
	}
	clock.Advance(time.Minute + time.Second) // its timer runs on real time: not fired
	if err := e.InjectFault(ActorAdmin, "a", FaultSpec{Mode: FaultLatency, Latency: Duration(10 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, ev := range e.Events(0) {
		if ev.Type == EventFault {
			said = append(said, ev.Message)
		}
	}
	if len(said) != 3 || !strings.HasPrefix(said[1], "fault expired") || !strings.Contains(said[2], "fault injected: latency") {
		t.Fatalf("fault events %q; want the first one's expiry before the second's injection", said)
	}
	if strings.Contains(said[2], "replaces") {
		t.Fatalf("the second fault replaces none in force: %q", said[2])
	}
}
