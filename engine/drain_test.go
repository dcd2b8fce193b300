package engine_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

func TestDrain_StopsNewTrafficAndLetsInFlightFinish(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(300 * time.Millisecond)}, sim.Config{})
	done := make(chan reply, 1)
	go func() { done <- h.call(1, "eth_getBalance", addr, "latest") }() // cold: goes to s0 first
	if err := h.sims[0].WaitFor(ctxT(t, 5*time.Second), func(c sim.Counters) bool { return c.InFlight == 1 }); err != nil {
		t.Fatal(err)
	}
	if code, b := h.adminDo("POST", "/v1/endpoints/s0/drain", ""); code != 200 {
		t.Fatalf("drain: %d %s", code, b)
	}
	r := <-done
	mustOK(t, r)
	if r.endpoint != "s0" {
		t.Fatalf("in-flight request answered by %s", r.endpoint)
	}
	before := h.sims[0].MethodCount("eth_getBalance")
	for i := 0; i < 50; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.endpoint != "s1" {
			t.Fatalf("drained endpoint answered")
		}
	}
	if got := h.sims[0].MethodCount("eth_getBalance"); got != before {
		t.Fatalf("drained sim counter moved %d → %d", before, got)
	}
	t.Logf("in-flight request finished on the drained endpoint after %s; its counter stayed at %d over 50 reads, all answered by s1", r.took.Round(time.Millisecond), before)
	if !h.endpoint("s0").Drained {
		t.Fatal("status does not show the drain")
	}
	if code, _ := h.adminDo("POST", "/v1/endpoints/s0/undrain", ""); code != 200 {
		t.Fatal("undrain")
	}
	if h.endpoint("s0").Drained {
		t.Fatal("still drained")
	}
	if code, _ := h.adminDo("POST", "/v1/endpoints/nope/drain", ""); code != 404 {
		t.Fatalf("drain of unknown endpoint: %d", code)
	}
}

// Draining the last endpoint that answers clients is allowed (an operator
// may mean to stop all traffic), and its event says what follows: over the
// admin API it went by in silence, and every request then failed.
func TestDrain_TheLastEndpointsDrainSaysEveryRequestWillFail(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	for _, name := range []string{"s0", "s1"} {
		if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/"+name+"/drain", ""); code != http.StatusOK {
			t.Fatalf("drain %s: HTTP %d %s", name, code, body)
		}
	}
	var msgs []string
	for _, ev := range h.events() {
		if ev.Type == engine.EventDrain {
			msgs = append(msgs, ev.Endpoint+": "+ev.Message)
		}
	}
	const last = "no endpoint is left to route to: every request fails until one is undrained"
	if len(msgs) != 2 || strings.Contains(msgs[0], last) || !strings.Contains(msgs[1], last) {
		t.Fatalf("drain events %q; want only the second to say no endpoint is left", msgs)
	}
}

// The others refusing connections leave no endpoint to route to as surely
// as drained ones do: the last drain said nothing then, and every read
// after it failed.
func TestDrain_TheLastDrainBesideEndpointsRefusingConnectionsSaysSo(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s0/fault", `{"mode":"refused"}`); code != http.StatusOK {
		t.Fatalf("fault: HTTP %d %s", code, body)
	}
	for i := range 10 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if ep := h.endpoint("s0"); !ep.Refusing {
		t.Fatalf("s0 after 10 reads under a refused fault: refusing %v; the test needs it", ep.Refusing)
	}
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s1/drain", ""); code != http.StatusOK {
		t.Fatalf("drain s1: HTTP %d %s", code, body)
	}
	for _, ev := range h.events() {
		if ev.Type == engine.EventDrain && ev.Endpoint == "s1" {
			if !strings.Contains(ev.Message, "no endpoint is left to route to") {
				t.Fatalf("drain event %q: want it to say no endpoint is left", ev.Message)
			}
			return
		}
	}
	t.Fatal("no drain event")
}
