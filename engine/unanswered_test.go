package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
)

// The hang that hedging hides trips the breaker only when the endpoint has
// both lost many races in a row and been silent for an attempt deadline: a
// burst of losses from a short stall is not a hang.
func TestUnanswered_TripsOnSilenceNotOnABurstOfLosses(t *testing.T) {
	e, clock := clockedEngine(t, 2, nil)
	ep := e.endpoints[0]
	lose := func() { e.noteUnanswered(&attempt{ep: ep, deadline: 250 * time.Millisecond}, clock.Now()) }

	// A stall: twelve attempts outrun within 40 ms of the last answer.
	ep.heard(clock.Now())
	for i := 0; i < 12; i++ {
		clock.Advance(3 * time.Millisecond)
		lose()
	}
	if s := ep.breaker.State(); s != breaker.Closed {
		t.Fatalf("a 36 ms stall opened the breaker (%s)", s)
	}
	// Too soon to judge, it is suspect and explored at once: the next
	// attempt it gets is held to its deadline, which judges the silence.
	if _, due := e.exploreDue(ep, clock.Now().UnixNano()); !ep.suspect.Load() || !due {
		t.Fatalf("12 losses too soon to judge: suspect %v, exploration due %v; want both", ep.suspect.Load(), due)
	}
	// It answers again: the streak starts over.
	ep.heard(clock.Now())
	clock.Advance(300 * time.Millisecond)
	for i := 0; i < 5; i++ {
		lose()
	}
	if s := ep.breaker.State(); s != breaker.Closed {
		t.Fatalf("5 losses (fewer than 2 × breaker.failures) opened the breaker (%s)", s)
	}
	lose()
	if s := ep.breaker.State(); s != breaker.Open {
		t.Fatalf("6 losses and 300 ms of silence left the breaker %s", s)
	}
}

// Only an endpoint that said something ends its silence: a timeout or a
// broken connection does not.
func TestUnanswered_SilenceEndsOnlyWhenTheEndpointResponds(t *testing.T) {
	e, clock := clockedEngine(t, 1, nil)
	ep := e.endpoints[0]
	heardAt := ep.heardAt.Load()
	for _, out := range []outcome{outTimeout, outConnError} {
		clock.Advance(time.Second)
		a := &attempt{ep: ep, start: clock.Now(), stats: ep.stats("eth_blockNumber")}
		e.recordProbe(a, upstreamReply{out: out, cause: out.String()}, 10*time.Millisecond)
		if ep.heardAt.Load() != heardAt {
			t.Fatalf("a %s counted as hearing from the endpoint", out)
		}
	}
	clock.Advance(time.Second)
	a := &attempt{ep: ep, start: clock.Now(), stats: ep.stats("eth_blockNumber")}
	e.recordProbe(a, upstreamReply{out: outHTTPError, cause: "HTTP 500"}, 10*time.Millisecond)
	if ep.heardAt.Load() == heardAt {
		t.Fatal("an HTTP 500 did not count as hearing from the endpoint")
	}
}

// In a slowdown of the whole pool the hedges sent to one endpoint lose to
// primaries started before them, after running less time than those took:
// such losses say nothing of the endpoint and trip nothing. Seen live:
// three sims ten times slower at once under 100 reads/s, the endpoint the
// router favoured least (it got mostly hedges) opened "6 attempts in a row
// outrun by hedges … looks hung" in the middle of the slowdown. Losses to
// attempts that answered sooner than it had run (a hung endpoint's, to
// quick hedges) still trip it, even when another endpoint is as silent.
func TestUnanswered_LossesToAttemptsGivenMoreTimeTripNothing(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	deadline := 250 * time.Millisecond
	a := e.endpoints[0]
	// lose: an attempt of a that ran for ran, outrun by one that took winner.
	lose := func(ran, winner time.Duration) {
		at := &attempt{ep: a, start: clock.Now().Add(-ran), deadline: deadline}
		at.cancelAt.Store(clock.Now().UnixNano())
		at.outranBy.Store(int64(winner))
		e.noteUnanswered(at, clock.Now())
	}
	for _, ep := range e.endpoints {
		ep.heard(clock.Now())
	}

	// Ten times slower at once: a's hedges, sent 150 ms after primaries
	// that answer after 1.4 s, lose after 1.25 s; nothing heard of a.
	clock.Advance(1400 * time.Millisecond)
	for i := 0; i < 12; i++ {
		lose(1250*time.Millisecond, 1400*time.Millisecond)
	}
	if s := a.breaker.State(); s != breaker.Closed {
		t.Fatalf("12 hedges outrun by primaries given more time opened a's breaker (%s)", s)
	}
	// Nor do they count in the status's outrun_unanswered, the figure the
	// drill reports (it counted every loser: "7 outrun by hedges").
	if n := a.acct.snapshot().OutrunUnanswered; n != 0 {
		t.Errorf("losses to attempts given more time counted as outrun unanswered: %d", n)
	}

	// a hangs: its primaries lose to hedges answered in 5 ms, 150 ms in.
	for i := 0; i < 6; i++ {
		lose(155*time.Millisecond, 5*time.Millisecond)
	}
	if s := a.breaker.State(); s != breaker.Open {
		t.Fatalf("a silent for 1.4 s and outrun 6 times in a row by quicker hedges: breaker %s", s)
	}
	if n := a.acct.snapshot().OutrunUnanswered; n != 6 {
		t.Errorf("outrun unanswered %d, want the 6 losses that tripped the breaker", n)
	}
}

// The totals' outrun_unanswered is the methods' sum, as every other
// count of the totals is (it read 0 beside eth_getBalance's 8).
func TestUnanswered_TotalsSumTheMethods(t *testing.T) {
	a := newAccounts()
	a.method("eth_getBalance").outrunUnanswered.Add(8)
	a.method("eth_call").outrunUnanswered.Add(2)
	if _, tot := a.byMethod(); tot.OutrunUnanswered != 10 {
		t.Fatalf("totals' outrun_unanswered %d, want 10", tot.OutrunUnanswered)
	}
}

// At a hedge delay of 0 the primary and its hedge start together, and a
// healthy endpoint slower than the winner loses every race by a hair (the
// shipped config's heavy-tail endpoint at "delay": "0s": "6 attempts in a
// row outrun by hedges ...: endpoint looks hung", its breaker opened). A
// streak of losses by less than the loser's own usual pace trips nothing,
// neither at once nor when a held loser then passes its deadline; a hung
// endpoint's losses, by the hedge delay and more, still trip.
func TestUnanswered_HealthySlowerEndpointIsNotTrippedByTies(t *testing.T) {
	e, clock := clockedEngine(t, 3, nil)
	deadline := 250 * time.Millisecond
	a := e.endpoints[0]
	ms := a.stats("eth_getBalance")
	for range 40 { // a answers in 50 ms, the winners below in 40
		ms.latency.Record(50 * time.Millisecond)
		a.latency.Record(50 * time.Millisecond)
	}
	lose := func(ran, winner time.Duration) {
		at := &attempt{ep: a, stats: ms, start: clock.Now().Add(-ran), deadline: deadline}
		at.cancelAt.Store(clock.Now().UnixNano())
		at.outranBy.Store(int64(winner))
		e.noteUnanswered(at, clock.Now())
	}
	for _, ep := range e.endpoints {
		ep.heard(clock.Now())
	}

	// Nothing heard of a for 1.4 s (its every attempt lost), and 12 ties:
	// each ran 40 ms and a hair, as long as the 40 ms winner took.
	clock.Advance(1400 * time.Millisecond)
	for range 12 {
		lose(40*time.Millisecond+200*time.Microsecond, 40*time.Millisecond)
	}
	if s := a.breaker.State(); s != breaker.Closed {
		t.Fatalf("12 ties with quicker attempts started with them opened the breaker of a, healthy at 50 ms (%s)", s)
	}
	// Its next loser, held, falls in its tail and passes its deadline.
	held := &attempt{ep: a, stats: ms, start: clock.Now(), deadline: deadline}
	clock.Advance(deadline)
	e.concludeOutrun(held, clock.Now())
	if s := a.breaker.State(); s != breaker.Closed {
		t.Fatalf("12 ties and one deadline passed opened the breaker of a, healthy at 50 ms (%s)", s)
	}

	// a hangs: its primaries lose to hedges sent 150 ms in, answered in 5 ms.
	for range 6 {
		lose(155*time.Millisecond, 5*time.Millisecond)
	}
	if s := a.breaker.State(); s != breaker.Open {
		t.Fatalf("a silent for 1.65 s and outrun 6 times in a row, by 150 ms, by quicker hedges: breaker %s", s)
	}
}
