package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An answer that came in through a stall of rpcdash's own is not learnt
// as its endpoint's latency: a starved or stopped process made every
// answer look slow, the auto hedge delay climbed (to hedge.max_delay, 2 s,
// beside endpoints answering in 0.2 ms on a box other processes starved)
// and the learnt attempt deadlines stretched with it, for as long as the
// stats window held those answers. Here 20 of 60 reads come in 150 ms
// late while rpcdash is stalled for those 150 ms (noted as the lag
// monitor notes one); the delay and the deadlines stay at the endpoints'
// 20 ms pace. The same 150 ms without a stall is the endpoints' own, and
// is learnt.
func TestOwnStall_AnswersTimedThroughAStallOfRpcdashAreNotLearnt(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(20 * time.Millisecond)}, sim.Config{Latency: fixed(20 * time.Millisecond)})
	const method = "eth_getBalance"
	for i := range 40 {
		mustOK(t, h.call(i, method, addr, "latest"))
	}
	slow := "150ms"
	for _, u := range h.sims {
		if err := u.Apply(sim.ControlRequest{ExtraLatency: &slow}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		sent := arrivals(h.sims)
		done := make(chan reply, 1)
		go func() { done <- h.call(100+i, method, addr, "latest") }()
		waitArrivals(t, h.sims, sent+1)
		// The answer is on its way for 150 ms more, and rpcdash does not
		// run meanwhile: the wait is the stall's as much as the endpoint's.
		h.eng.NoteStall(150 * time.Millisecond)
		mustOK(t, <-done)
	}
	st := h.status()
	hedge := st.Methods[method].Hedge
	if hedge == nil || hedge.DelaySource != "auto" || hedge.Delay >= 100*time.Millisecond {
		t.Errorf("auto delay after 20 of 60 answers came through a 150 ms stall of rpcdash: %+v, want the endpoints' pace (about 20 ms)", hedge)
	}
	for _, ep := range st.Endpoints {
		if m := ep.Methods[method]; m.AttemptTimeout > 250*time.Millisecond || m.Latency.P99 >= 100*time.Millisecond {
			t.Errorf("%s: attempt deadline %s, p99 %s after answers timed through a stall, want the 250ms floor and the 20 ms pace", ep.Name, m.AttemptTimeout, m.Latency.P99)
		}
	}

	// The same 150 ms with rpcdash running is the endpoints': learnt.
	for i := range 40 {
		mustOK(t, h.call(200+i, method, addr, "latest"))
	}
	if hedge := h.status().Methods[method].Hedge; hedge == nil || hedge.Delay < 150*time.Millisecond {
		t.Errorf("auto delay after 40 of 100 answers took 170 ms with no stall: %+v, want at least 150 ms", hedge)
	}
}

func arrivals(sims []*sim.Upstream) int64 {
	var n int64
	for _, u := range sims {
		n += u.Counters().Total
	}
	return n
}

// waitArrivals waits until the sims have been sent want requests in all.
func waitArrivals(t *testing.T, sims []*sim.Upstream, want int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for arrivals(sims) < want {
		select {
		case <-ctx.Done():
			t.Fatalf("the sims got %d requests, want %d", arrivals(sims), want)
		case <-time.After(time.Millisecond):
		}
	}
}

// A hedge is not sent while rpcdash lost most of its wait to its own
// slowness, though its timer fired on time: in a process starved of CPU
// the timer's goroutine runs first, and the primary's answer may be the
// one waiting its turn. Without this, the hedges a starved rpcdash sent
// added work exactly when it could not keep up. It looks again a delay
// later, as for a timer that fired late.
func TestOwnStall_HedgeWaitsWhileRpcdashLostMostOfItsDelay(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("200ms")(c)
		c.Hedge.Budget = 1
	}, sim.Config{Latency: fixed(600 * time.Millisecond)}, sim.Config{Latency: fixed(600 * time.Millisecond)})
	done := make(chan reply, 1)
	go func() { done <- h.call(1, "eth_getBalance", addr, "latest") }()
	waitArrivals(t, h.sims, 1)
	// 150 ms of the 200 ms delay spent waiting to run, ten waits noted
	// by the time the hedge falls due.
	for i := range 10 {
		h.eng.NoteQueued(time.Now().Add(time.Duration(15*(i+1))*time.Millisecond), 15*time.Millisecond)
	}
	mustOK(t, <-done)
	code, b := h.adminDo("GET", "/v1/status", "")
	var st struct {
		Methods map[string]struct {
			HedgesRefused map[string]int64 `json:"hedges_refused"`
			HedgesFired   int64            `json:"hedges_fired"`
		} `json:"methods"`
	}
	if code != 200 || json.Unmarshal(b, &st) != nil {
		t.Fatalf("status: HTTP %d", code)
	}
	m := st.Methods["eth_getBalance"]
	if m.HedgesRefused["late"] != 1 {
		t.Errorf("hedge due after 200 ms of which rpcdash lost 150 ms waiting to run: refused %v, fired %d; want it held (late) once", m.HedgesRefused, m.HedgesFired)
	}
}

// Run-queue waits that add up to half a deadline (a process short of CPU,
// not stopped) hold an overdue read's race once, a deadline; they do not
// hold it look after look until the request's last one. The process runs
// through that deadline and would have read an answer waiting for it:
// held again and again, a read beside 2 busy loops waited 1.3 s for a race
// its other endpoint answered in 52 ms. Here the first attempt's endpoint
// takes 3 s, the other answers at once, and rpcdash notes run-queue waits
// of 12 ms in every 20 ms throughout.
func TestOwnStall_RunQueueWaitsHoldARaceOnceOnly(t *testing.T) {
	// The test speeds the other endpoint up once the first attempt has
	// reached its own. A test goroutine starved past the race (a loaded
	// machine) speeds it up too late, and that try says nothing: it is run
	// again, on a fresh engine, since its 3 s answer was learnt.
	untilJudged(t, func(int) string {
		r, first, deadline, ok := raceBesideRunQueueWaits(t)
		if !ok {
			return "the race reached the other endpoint before the test sped it up"
		}
		if r.endpoint == first || r.attempts != 2 {
			t.Fatalf("answered by %s after %d attempts in %s (first attempt on %s, deadline %s); want the other endpoint's answer from the race", r.endpoint, r.attempts, r.took.Round(time.Millisecond), first, deadline)
		}
		// Held once at the deadline, raced a deadline later: well before
		// the slow endpoint's 3 s, and at least the one hold.
		if r.took > 3*deadline+500*time.Millisecond || r.took < 2*deadline-50*time.Millisecond {
			t.Fatalf("read took %s with a deadline of %s: want the race after one hold, about %s", r.took.Round(time.Millisecond), deadline, 2*deadline)
		}
		t.Logf("deadline %s: the race went after one hold; answered by %s in %s", deadline, r.endpoint, r.took.Round(time.Millisecond))
		return ""
	})
}

// raceBesideRunQueueWaits sends one read whose first attempt's endpoint
// takes 3 s while the other answers at once, with run-queue waits of 12 ms
// noted in every 20 ms throughout. It returns the reply, the first
// attempt's endpoint and the attempt deadline; false when the other
// endpoint was reached before it was sped up.
func raceBesideRunQueueWaits(t *testing.T) (r reply, first string, deadline time.Duration, ok bool) {
	t.Helper()
	h := newHarness(t, func(c *engine.Config) { c.Server.RequestTimeout = 10 * time.Second },
		sim.Config{Latency: fixed(10 * time.Millisecond)}, sim.Config{Latency: fixed(10 * time.Millisecond)})
	warm(t, h)
	for _, ep := range h.status().Endpoints {
		deadline = max(deadline, ep.Methods["eth_getBalance"].AttemptTimeout)
	}
	for _, s := range h.sims {
		s.SetExtraLatency(3 * time.Second)
	}
	stop := make(chan struct{})
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				h.eng.NoteQueued(now, 12*time.Millisecond)
			}
		}
	}()
	defer func() { close(stop); <-fed }()
	before := make([]int64, len(h.sims))
	for i, s := range h.sims {
		before[i] = s.MethodCount("eth_getBalance")
	}
	done := make(chan reply, 1)
	go func() { done <- h.call(1, "eth_getBalance", addr, "latest") }()
	// Its first attempt, not a probe, has reached an endpoint.
	for give := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		var sent int64
		for i, s := range h.sims {
			sent += s.MethodCount("eth_getBalance") - before[i]
		}
		if sent > 0 {
			break
		}
		if time.Now().After(give) {
			t.Fatal("the read reached no endpoint in 5 s")
		}
	}
	// The other endpoint answers at once from now on.
	reached := 0
	for i, s := range h.sims {
		if s.MethodCount("eth_getBalance") == before[i] {
			s.SetExtraLatency(0)
		} else {
			first = fmt.Sprintf("s%d", i)
			reached++
		}
	}
	r = <-done
	mustOK(t, r)
	return r, first, deadline, reached == 1
}
