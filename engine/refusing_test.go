package engine_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A refused connection marks its endpoint refusing whichever attempt meets
// it, not only one that gives its breaker a verdict. Seen live: an answer
// (here a probe's) cleared the mark while the breaker stayed open, and
// panic routing, whose attempts past an open breaker give no verdict, went
// on sending reads to an endpoint that refused every connection until the
// next half-open trial. s0 refuses; s1 keeps failing, so both breakers are
// open and every read is panic routing's.
func TestRefusing_AnyAttemptRefusedMarksItAgain(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Cooldown = time.Minute // no half-open trial during the test
		c.Breaker.MaxOpenShare = 1       // s1's breaker may open too
	}, sim.Config{}, sim.Config{})
	refuse := func() {
		t.Helper()
		if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s0/fault", `{"mode":"refused"}`); code != http.StatusOK {
			t.Fatalf("inject refused on s0: HTTP %d %s", code, body)
		}
	}
	refuse()
	h.sims[1].SetMode(sim.ModeError)
	for i := 0; h.endpoint("s0").Breaker.State != engine.BreakerOpen || h.endpoint("s1").Breaker.State != engine.BreakerOpen; i++ {
		if i == 100 {
			t.Fatalf("breakers not both open after 100 reads: s0 %s, s1 %s", h.endpoint("s0").Breaker.State, h.endpoint("s1").Breaker.State)
		}
		h.call(i, "eth_getBalance", addr, "latest")
	}
	if !h.endpoint("s0").Refusing {
		t.Fatalf("s0 not refusing after its breaker opened on refused connections")
	}

	// s0 answers a probe (its breaker, open, is not asked), then refuses again.
	answer := func() {
		t.Helper()
		if code, body := h.adminDo(http.MethodDelete, "/v1/endpoints/s0/fault", ""); code != http.StatusOK {
			t.Fatalf("clear the fault on s0: HTTP %d %s", code, body)
		}
		if res, err := h.eng.Probe(ctxT(t, 5*time.Second), "s0", "eth_blockNumber", nil); err != nil || !res.OK {
			t.Fatalf("probe of s0: %+v, %v; want an answer", res, err)
		}
		if ep := h.endpoint("s0"); ep.Refusing || ep.Breaker.State != engine.BreakerOpen {
			t.Fatalf("after an answer: s0 refusing %v, breaker %s; want not refusing, still open", ep.Refusing, ep.Breaker.State)
		}
		refuse()
	}

	answer()
	const reads = 10
	before := h.endpoint("s0").Rates.Attempts
	for i := range reads {
		h.call(100+i, "eth_getBalance", addr, "latest")
	}
	sent := h.endpoint("s0").Rates.Attempts - before
	if !h.status().Panic {
		t.Fatalf("panic routing off with both breakers open")
	}
	if sent > 1 || !h.endpoint("s0").Refusing {
		t.Fatalf("panic routing sent %d of %d reads to s0, which refused each (refusing %v); want 1, the one that shows it refuses",
			sent, reads, h.endpoint("s0").Refusing)
	}

	// A probe that meets a refused connection marks it too.
	answer()
	if res, err := h.eng.Probe(ctxT(t, 5*time.Second), "s0", "eth_blockNumber", nil); err != nil || res.OK {
		t.Fatalf("probe of s0 refusing: %+v, %v; want a failure", res, err)
	}
	if !h.endpoint("s0").Refusing {
		t.Fatalf("a probe met a refused connection and s0 is not marked refusing")
	}
	t.Logf("%d of %d panic-routed reads reached s0 after it refused again", sent, reads)
}

// With every endpoint refusing connections, their breakers open, a request
// still tries them: only a connection says when one is back, and a refused
// one is as quick as a direct client's. Seen live: three endpoints down,
// then one back, and every request was answered "no routable endpoint"
// until the next probe (up to probes.interval, 5 s; 30 reads at 20/s),
// where a client of that endpoint had its answers at once. Here no probe
// runs and no trial comes within the test: the read must find it itself.
// A write goes to it too: a refused connection never carried it.
func TestRefusing_EveryEndpointRefusingIsStillAskedSoTheFirstBackAnswers(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Cooldown = time.Minute // no half-open trial during the test
	}, sim.Config{}, sim.Config{})
	for _, name := range []string{"s0", "s1"} {
		if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/"+name+"/fault", `{"mode":"refused"}`); code != http.StatusOK {
			t.Fatalf("inject refused on %s: HTTP %d %s", name, code, body)
		}
	}
	for i := 0; h.endpoint("s0").Breaker.State != engine.BreakerOpen || h.endpoint("s1").Breaker.State != engine.BreakerOpen; i++ {
		if i == 100 {
			t.Fatalf("breakers not both open after 100 reads: s0 %s, s1 %s", h.endpoint("s0").Breaker.State, h.endpoint("s1").Breaker.State)
		}
		if r := h.call(i, "eth_getBalance", addr, "latest"); r.took > time.Second {
			t.Fatalf("read %d with every endpoint refusing took %s: %s", i, r.took, r.body)
		}
	}
	if !h.endpoint("s0").Refusing || !h.endpoint("s1").Refusing {
		t.Fatalf("not both refusing: s0 %v, s1 %v", h.endpoint("s0").Refusing, h.endpoint("s1").Refusing)
	}
	if code, body := h.adminDo(http.MethodDelete, "/v1/endpoints/s1/fault", ""); code != http.StatusOK {
		t.Fatalf("clear the fault on s1: HTTP %d %s", code, body)
	}
	r := h.call(200, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if r.endpoint != "s1" {
		t.Fatalf("answered by %q, want s1, the one back", r.endpoint)
	}
	before := h.sims[1].Counters().Total
	w := h.call(201, "eth_sendRawTransaction", "0x01")
	if w.endpoint != "s1" || w.status != http.StatusOK || w.rpcError() != nil {
		t.Fatalf("write answered by %q, HTTP %d %s; want s1's answer", w.endpoint, w.status, w.body)
	}
	if n := h.sims[1].Counters().Total - before; n != 1 {
		t.Fatalf("s1 got %d requests for the write, want 1", n)
	}
}

// An endpoint refusing connections is asked, first, when every other
// endpoint left is backing off after a 429, as when every endpoint left
// refuses. Seen in a chaos run (s0 answering 429 to every request, s1
// killed and started again on its port): every read was answered -32005
// "rate limited: every endpoint that can take this request answered HTTP
// 429 or is backing off" for 5.2 s after s1 was back, until the next
// probe, while a client of s1 had 10 of 10 answers in that time. Here no
// probe runs, no trial comes within the test and s0's back-off (its
// Retry-After) outlasts it: the read must find s1 itself.
func TestRefusing_BackWhileTheOthersBackOffIsAskedSoItAnswers(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Cooldown = time.Minute // no half-open trial during the test
	}, sim.Config{RetryAfter: 30 * time.Second}, sim.Config{})
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s1/fault", `{"mode":"refused"}`); code != http.StatusOK {
		t.Fatalf("inject refused on s1: HTTP %d %s", code, body)
	}
	h.sims[0].SetMode(sim.ModeRateLimit)
	for i := 0; h.endpoint("s1").Breaker.State != engine.BreakerOpen || !h.endpoint("s1").Refusing; i++ {
		if i == 100 {
			s1 := h.endpoint("s1")
			t.Fatalf("after 100 reads: s1 breaker %s, refusing %v; want open, refusing", s1.Breaker.State, s1.Refusing)
		}
		h.call(i, "eth_getBalance", addr, "latest")
	}
	if e := h.call(100, "eth_getBalance", addr, "latest").rpcError(); e == nil || e["code"] != float64(-32005) {
		t.Fatalf("with s0 answering 429 and s1 refusing: %v; want -32005, rate limited", e)
	}
	if code, body := h.adminDo(http.MethodDelete, "/v1/endpoints/s1/fault", ""); code != http.StatusOK {
		t.Fatalf("clear the fault on s1: HTTP %d %s", code, body)
	}
	before := h.sims[0].Counters().Total
	r := h.call(200, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if r.endpoint != "s1" {
		t.Fatalf("answered by %q, want s1, the one back", r.endpoint)
	}
	if n := h.sims[0].Counters().Total - before; n != 0 {
		t.Fatalf("s0, backing off, got %d requests for the read; want none: s1 answered first", n)
	}
}
