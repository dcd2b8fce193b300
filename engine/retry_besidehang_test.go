package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// The shipped config's incident: steady drained, tail hung (its breaker
// opened on hangs a moment ago, so it was heard from within the cooldown),
// flaky the only endpoint that answers, with its 500s and 429s. A read
// must never wait on the hung endpoint longer than a client of flaky
// alone would wait: flaky's back-off end after a 429, nothing after a 500.
// Seen: reads of 2.9 to 5.8 s, flaky asked only at tail's deadline for the
// method (2.85 s, learnt from its heavy tail).

// besideHangDeadline is s1's attempt deadline in these tests: far past a
// 1 s back-off, so that a read that waits for it is plain.
const besideHangDeadline = 2500 * time.Millisecond

// scriptedBalances is an upstream whose next eth_getBalance answers are
// given by script (429 with Retry-After 1, 500), each taken once; then
// "0x1". It counts the eth_getBalance calls it gets.
type scriptedBalances struct {
	mu     sync.Mutex
	script []int // HTTP statuses to answer next
	calls  atomic.Int64
	// limited is told each 429 given.
	limited chan struct{}
}

func newScriptedBalances(t *testing.T) (*scriptedBalances, string) {
	sb := &scriptedBalances{limited: make(chan struct{}, 8)}
	srv := scriptedUpstream(t, func(w http.ResponseWriter, id json.RawMessage, method string) bool {
		if method != "eth_getBalance" {
			return false
		}
		sb.calls.Add(1)
		sb.mu.Lock()
		status := 0
		if len(sb.script) > 0 {
			status, sb.script = sb.script[0], sb.script[1:]
		}
		sb.mu.Unlock()
		switch status {
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32005,"message":"rate limited"}}`, id)
			sb.limited <- struct{}{}
		case http.StatusInternalServerError:
			w.WriteHeader(status)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"upstream error"}}`)
		default:
			return false
		}
		return true
	})
	return sb, srv.URL
}

func (sb *scriptedBalances) next(statuses ...int) {
	sb.mu.Lock()
	sb.script = append(sb.script, statuses...)
	sb.mu.Unlock()
}

// besideHang starts s0 (scripted) and s1 (a 5 ms sim), a cooldown far
// longer than the test, and s1's deadline besideHangDeadline; both answer
// 20 reads taking turns, so their deadlines are learnt.
func besideHang(t *testing.T) (*harness, *scriptedBalances) {
	return besideHangTurns(t, true)
}

// besideHangTurns is besideHang; without turns s0, the quicker, takes
// every first attempt.
func besideHangTurns(t *testing.T, turns bool) (*harness, *scriptedBalances) {
	sb, url := newScriptedBalances(t)
	h := newHarness(t, func(c *engine.Config) {
		if turns {
			takeTurns(c)
		}
		c.Breaker.Cooldown = time.Minute
		c.Breaker.AttemptTimeoutMin = besideHangDeadline
		c.Endpoints[0].URL = url
	}, sim.Config{}, sim.Config{Latency: fixed(5 * time.Millisecond)})
	h.eng.UseProbeTrials() // no client read is a trial of s1
	for i := range 20 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	warmEveryEndpointTo(t, h, 5, "eth_getBalance", addr, "latest") // s1 measured too
	return h, sb
}

// hangUntilOpen hangs s1 and sends reads, a few at a time, until the
// hangs open its breaker: s1 was heard from a moment ago, and has said
// nothing since its attempts passed their deadline.
func hangUntilOpen(t *testing.T, h *harness) {
	t.Helper()
	hangUntilOpenIn(t, h, 4)
}

// waitBackingOff waits for s0's 429 and for the engine to back
// eth_getBalance off on s0 for it (1 s).
func waitBackingOff(t *testing.T, h *harness, sb *scriptedBalances) {
	t.Helper()
	<-sb.limited
	for i := 0; h.endpoint("s0").Methods["eth_getBalance"].BackoffUntil.IsZero(); i++ {
		if i == 200 {
			t.Fatal("s0 answered 429, and no back-off of eth_getBalance on it after 200 looks")
		}
		time.Sleep(time.Millisecond)
	}
}

// After a 500, with only the hung endpoint left (its breaker open on
// hangs, heard from within the cooldown), the endpoint that failed is
// asked again at once, as its own client would.
func TestRetry_ReadAsksAgainAtOnceRatherThanAnOpenBreakerThatHangs(t *testing.T) {
	t.Parallel()
	h, sb := besideHang(t)
	hangUntilOpen(t, h)
	s1 := h.sims[1].MethodCount("eth_getBalance")
	before := sb.calls.Load()
	sb.next(http.StatusInternalServerError)
	r := h.call(200, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if got := h.sims[1].MethodCount("eth_getBalance") - s1; r.endpoint != "s0" || got != 0 || sb.calls.Load()-before != 2 || r.took >= besideHangDeadline/2 {
		t.Fatalf("s0's 500 beside s1 hung: answered by %q after %s, s0 asked %d times, s1 %d; want s0 asked again at once, s1 not at all, well before s1's deadline %s",
			r.endpoint, r.took.Round(time.Millisecond), sb.calls.Load()-before, got, besideHangDeadline)
	}
}

// A read panic routing sends first to an endpoint that hangs (its breaker
// open on errors, so not yet known to hang) is raced to the endpoint
// backing off when its back-off ends, not at the hang's deadline.
func TestPanic_ReadSentFirstToAHangIsRacedWhenTheBackOffBehindItEnds(t *testing.T) {
	t.Parallel()
	h, sb := besideHang(t)
	readUntilOpen(t, h, "s1", h.sims[1]) // 500s: heard from, not hung
	h.sims[1].SetMode(sim.ModeHang)
	r := readWhileBackingOff(t, h, sb, 400)
	if r.endpoint != "s0" || r.took >= besideHangDeadline*3/4 {
		t.Fatalf("answered by %q after %s in %d attempts; want s0 once its 1 s back-off ended, well before s1's deadline %s",
			r.endpoint, r.took.Round(time.Millisecond), r.attempts, besideHangDeadline)
	}
}

// A 429 then a 500 beside the hung endpoint: the read asks again at the
// back-off's end, then at once after the 500, not at the hang's deadline.
func TestRetry_ReadBesideAHangAsksAgainAtTheBackOffEndThenAtOnce(t *testing.T) {
	t.Parallel()
	h, sb := besideHang(t)
	hangUntilOpen(t, h)
	before := sb.calls.Load()
	sb.next(http.StatusTooManyRequests, http.StatusInternalServerError)
	r := h.call(500, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if r.endpoint != "s0" || sb.calls.Load()-before != 3 || r.took >= besideHangDeadline*3/4 {
		t.Fatalf("answered by %q after %s, s0 asked %d times; want s0 three times (429, 500 at its back-off end, then at once), well before s1's deadline %s",
			r.endpoint, r.took.Round(time.Millisecond), sb.calls.Load()-before, besideHangDeadline)
	}
}

// A read sent first to an endpoint that has just hung (its breaker still
// closed: nothing charged yet), with the other endpoint backing off its
// method, is raced to that one when its back-off ends, not at the hang's
// deadline. Seen at the start of the incident: reads sent to tail as it
// hung waited its 3.1 s deadline, flaky's back-off over for 2 s.
func TestRateLimit_ReadSentFirstToAFreshHangIsRacedWhenTheBackOffEnds(t *testing.T) {
	t.Parallel()
	h, sb := besideHangTurns(t, false)
	h.sims[1].SetMode(sim.ModeHang)
	r := readWhileBackingOff(t, h, sb, 600)
	if st := h.endpoint("s1").Breaker.State; r.endpoint != "s0" || r.took >= besideHangDeadline*3/4 {
		t.Fatalf("answered by %q after %s in %d attempts (s1's breaker %s); want s0 once its 1 s back-off ended, well before s1's deadline %s",
			r.endpoint, r.took.Round(time.Millisecond), r.attempts, st, besideHangDeadline)
	}
}

// readWhileBackingOff sends a read that meets s0's 429 (its back-off
// starts), then, while s0 backs off, the read under test (id+1), which it
// returns; both must be answered.
func readWhileBackingOff(t *testing.T, h *harness, sb *scriptedBalances, id int) reply {
	t.Helper()
	sb.next(http.StatusTooManyRequests)
	first := make(chan reply, 1)
	go func() { first <- h.call(id, "eth_getBalance", addr, "latest") }()
	waitBackingOff(t, h, sb)
	r := h.call(id+1, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	mustOK(t, <-first)
	return r
}
