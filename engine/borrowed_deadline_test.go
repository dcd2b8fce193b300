package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint hung before it answered anything never learns a deadline: a
// read that meets it races the endpoint that answers at the deadline that
// endpoint's answers give, not at the cold third of the request's deadline.
// Its silence is charged only at the cold deadline.
func TestColdDeadline_HungColdEndpointIsRacedAtThePoolsPace(t *testing.T) {
	t.Parallel()
	h := standbyBehind(t, 20*time.Millisecond, nil) // reads go to the hung s0 first
	h.sims[0].SetMode(sim.ModeHang)
	cold := h.eng.Config().Server.RequestTimeout / 3

	first := h.call(1, "eth_getBalance", addr, "latest") // nothing answered the method yet: the cold deadline
	if first.status != 200 || first.endpoint != "s1" {
		t.Fatalf("first read: status %d from %q, want 200 from s1", first.status, first.endpoint)
	}
	m := h.endpoint("s0").Methods["eth_getBalance"]
	if m.AttemptTimeoutSource != "borrowed" || m.AttemptTimeout != 250*time.Millisecond {
		t.Fatalf("s0's deadline after s1 answered once: %v (%s), want 250ms (borrowed)", m.AttemptTimeout, m.AttemptTimeoutSource)
	}
	second := h.call(2, "eth_getBalance", addr, "latest")
	if second.status != 200 || second.endpoint != "s1" || second.attempts != 2 {
		t.Fatalf("second read: status %d from %q in %d attempts, want 200 from s1 in 2", second.status, second.endpoint, second.attempts)
	}
	if second.took >= cold/2 {
		t.Errorf("second read took %v beside a hung cold endpoint, want about the borrowed 250ms deadline (cold: %v)", second.took, cold)
	}
	// Passing the borrowed deadline is no verdict: only the first read's
	// attempt, past the cold deadline, was charged.
	if n := h.endpoint("s0").Breaker.ConsecutiveFailures; n != 1 {
		t.Errorf("s0 charged %d hangs, want 1 (the cold deadline the first read passed)", n)
	}
}

// A healthy endpoint slower than its peers, cold, is raced at the deadline
// its fast peer's answers give, but never charged a hang for answering at
// its own pace: its breaker stays closed and it learns its own deadline.
func TestColdDeadline_SlowHealthyEndpointIsNotChargedAtABorrowedDeadline(t *testing.T) {
	t.Parallel()
	h := standbyBehind(t, 600*time.Millisecond, nil)
	// The fast standby answers the method once, while the slow s0 is
	// drained: s0 has never been heard from.
	if code, body := h.adminDo("POST", "/v1/endpoints/s0/drain", ""); code != 200 {
		t.Fatalf("drain: %d %s", code, body)
	}
	if r := h.call(1, "eth_getBalance", addr, "latest"); r.status != 200 || r.endpoint != "s1" {
		t.Fatalf("warm-up read: status %d from %q", r.status, r.endpoint)
	}
	if code, body := h.adminDo("POST", "/v1/endpoints/s0/undrain", ""); code != 200 {
		t.Fatalf("undrain: %d %s", code, body)
	}
	if src := h.endpoint("s0").Methods["eth_getBalance"].AttemptTimeoutSource; src != "" && src != "borrowed" {
		t.Fatalf("s0's deadline source %q, want borrowed", src)
	}
	raced := 0
	for wave := range 3 {
		done := make(chan reply, 8)
		for i := range 8 {
			go func() { done <- h.call(10*wave+i, "eth_getBalance", addr, "latest") }()
		}
		for range 8 {
			r := <-done
			if r.status != 200 {
				t.Fatalf("wave %d: status %d %s", wave, r.status, r.body)
			}
			if r.attempts > 1 {
				raced++
			}
		}
	}
	if raced == 0 {
		t.Fatal("no read raced s1 beside the slow s0")
	}
	ep := h.endpoint("s0")
	t.Logf("raced %d of 24; s0 %v %s, %d overdue, %d late", raced, ep.Methods["eth_getBalance"].AttemptTimeout, ep.Methods["eth_getBalance"].AttemptTimeoutSource, ep.Methods["eth_getBalance"].Overdue, ep.Methods["eth_getBalance"].LateAnswers)
	if ep.Breaker.State.String() != "closed" {
		t.Errorf("s0's breaker %s (%d failures in a row) for answering at its pace", ep.Breaker.State, ep.Breaker.ConsecutiveFailures)
	}
	for _, ev := range h.events() {
		if ev.Endpoint == "s0" && ev.Type == "breaker" {
			t.Errorf("s0: %s", ev.Message)
		}
	}
}

// Raced early, a hung cold endpoint's reads are still judged at the cold
// deadline, each of them: its breaker opens after breaker.failures of
// them, as when they waited that long.
func TestColdDeadline_HungColdEndpointIsChargedForEachReadAtTheColdDeadline(t *testing.T) {
	t.Parallel()
	h := standbyBehind(t, 20*time.Millisecond, nil)
	h.sims[0].SetMode(sim.ModeHang)
	cold := h.eng.Config().Server.RequestTimeout / 3
	failures := h.eng.Config().Breaker.Failures
	for i := range failures {
		if r := h.call(i, "eth_getBalance", addr, "latest"); r.status != 200 || r.endpoint != "s1" {
			t.Fatalf("read %d: status %d from %q", i, r.status, r.endpoint)
		}
	}
	deadline := time.Now().Add(3 * cold)
	for h.endpoint("s0").Breaker.State.String() != "open" {
		if time.Now().After(deadline) {
			t.Fatalf("s0's breaker %s with %d hangs charged, want open after %d reads met it", h.endpoint("s0").Breaker.State, h.endpoint("s0").Breaker.ConsecutiveFailures, failures)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A cold endpoint silent past its borrowed deadline has no verdict until
// its cold one, but it is ranked behind the endpoints that answer
// meanwhile: reads do not go to it first, each to wait out the borrowed
// deadline before the race.
func TestColdDeadline_SilentColdEndpointIsRankedBehindTheAnswering(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) {
		c.Server.TraceRequests = 1000
		c.Breaker.Cooldown = time.Minute
	}, sim.Config{Latency: fixed(5 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)},
		sim.Config{Latency: fixed(20 * time.Millisecond)})
	h.sims[0].SetMode(sim.ModeHang)
	cold := h.eng.Config().Server.RequestTimeout / 3
	// The others answer the method while s0 is drained: s0 has a deadline
	// to borrow and has never been heard from.
	if code, body := h.adminDo("POST", "/v1/endpoints/s0/drain", ""); code != 200 {
		t.Fatalf("drain: %d %s", code, body)
	}
	for i := range 20 {
		mustOK(t, h.call(1000+i, "eth_getBalance", addr, "latest"))
	}
	if code, body := h.adminDo("POST", "/v1/endpoints/s0/undrain", ""); code != 200 {
		t.Fatalf("undrain: %d %s", code, body)
	}
	// Until well before s0's cold deadline: no verdict on it yet.
	start := time.Now()
	var firsts []string
	for i := 0; time.Since(start) < cold-400*time.Millisecond; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		// Answered in one attempt, a read never met the hung s0: its time
		// is the loaded machine's (seen: 278 and 454 ms in 1 attempt).
		if r.took >= 200*time.Millisecond && r.attempts > 1 {
			firsts = append(firsts, fmt.Sprintf("read %d took %s in %d attempts", i, r.took.Round(time.Millisecond), r.attempts))
		}
	}
	if st := h.endpoint("s0").Breaker; st.ConsecutiveFailures != 0 {
		t.Fatalf("s0 charged %d hangs before its cold deadline %s: the rule under test was not reached", st.ConsecutiveFailures, cold)
	}
	// One read met s0 and waited its borrowed deadline; none after it.
	if len(firsts) > 1 {
		t.Errorf("%d reads waited on the silent cold s0 before its verdict: %s", len(firsts), strings.Join(firsts, "; "))
	}
	t.Logf("reads that waited on s0: %s; s0's deadline %s (%s)", strings.Join(firsts, "; "), h.endpoint("s0").Methods["eth_getBalance"].AttemptTimeout, h.endpoint("s0").Methods["eth_getBalance"].AttemptTimeoutSource)
}

// A method no endpoint has answered yet borrows the pace of the others'
// answers to every method: the first read of it, first to an endpoint that
// hung while cold, races the endpoint that answers at that deadline, not
// at the cold third of the request's deadline.
func TestColdDeadline_FirstReadOfAMethodBorrowsThePoolsPaceOfEveryMethod(t *testing.T) {
	t.Parallel()
	h := standbyBehind(t, 20*time.Millisecond, nil) // reads go to s0 first while it is routable
	cold := h.eng.Config().Server.RequestTimeout / 3
	// s1 answers two reads of another method while s0 is drained: both
	// stay cold (fewer than five answers), and nobody has answered
	// eth_getBalance.
	if code, b := h.adminDo("POST", "/v1/endpoints/s0/drain", ""); code != 200 {
		t.Fatalf("drain: HTTP %d %s", code, b)
	}
	for i := range 2 {
		if r := h.call(i, "eth_blockNumber"); r.status != 200 || r.endpoint != "s1" {
			t.Fatalf("warm-up read %d: status %d from %q, want 200 from s1", i, r.status, r.endpoint)
		}
	}
	if code, b := h.adminDo("POST", "/v1/endpoints/s0/undrain", ""); code != 200 {
		t.Fatalf("undrain: HTTP %d %s", code, b)
	}
	h.sims[0].SetMode(sim.ModeHang)

	r := h.call(3, "eth_getBalance", addr, "latest")
	if r.status != 200 || r.endpoint != "s1" || r.attempts != 2 {
		t.Fatalf("first eth_getBalance: status %d from %q in %d attempts, want 200 from s1 in 2 (s0 first)", r.status, r.endpoint, r.attempts)
	}
	if r.took >= cold/2 {
		t.Errorf("first eth_getBalance took %v beside a hung cold endpoint, want about the borrowed 250ms deadline (cold: %v)", r.took, cold)
	}
	t.Logf("first eth_getBalance answered by %s in %v (cold deadline %v)", r.endpoint, r.took, cold)
}

// standbyBehind is a pool of s0, answering in first, and the standby s1
// (20 ms), so that reads go to s0 first while it is routable; breakers
// cool down for longer than a test. mut, when not nil, changes the config
// further.
func standbyBehind(t *testing.T, first time.Duration, mut func(*engine.Config)) *harness {
	t.Helper()
	return newHarness(t, func(c *engine.Config) {
		c.Endpoints[1].Role = engine.RoleStandby
		c.Breaker.Cooldown = time.Minute
		if mut != nil {
			mut(c)
		}
	}, sim.Config{Latency: fixed(first)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
}
