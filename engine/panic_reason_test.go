package engine_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// panic_reason is what the console's banner prints: it must count the
// routable endpoints now, not those of the moment panic routing began
// (seen live: "1 of 3 endpoints routable" on the banner while the header
// and the status said 0 of 3).
func TestPanic_ReasonCountsTheRoutableEndpointsNow(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Cooldown = time.Minute // no half-open trial during the test
	}, sim.Config{}, sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(4 * time.Millisecond)})
	refuse := func(names ...string) {
		for _, name := range names {
			if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/"+name+"/fault", `{"mode":"refused"}`); code != http.StatusOK {
				t.Fatalf("inject refused on %s: HTTP %d %s", name, code, body)
			}
		}
		// Refused connections are hard evidence: each read that meets one
		// counts against its breaker, whatever breaker.max_open_share says.
		for i := 0; i < 200; i++ {
			h.call(i, "eth_getBalance", addr, "latest")
			open := 0
			for _, name := range names {
				if h.endpoint(name).Breaker.State == engine.BreakerOpen {
					open++
				}
			}
			if open == len(names) {
				return
			}
		}
		t.Fatalf("breakers of %v not all open after 200 reads", names)
	}
	// The engine's upkeep recounts the pool every 20 ms (or a read does).
	settled := func(routable int) engine.Snapshot {
		var st engine.Snapshot
		testutil.WaitUntil(t, 2*time.Second, "panic routing to count the pool", func() bool {
			st = h.status()
			return st.Panic && st.Routable == routable && strings.HasPrefix(st.PanicReason, fmt.Sprintf("%d of 3", routable))
		})
		return st
	}
	refuse("s0", "s1")
	st := settled(1)
	if !st.Panic || st.Routable != 1 || !strings.HasPrefix(st.PanicReason, "1 of 3 endpoints routable") {
		t.Fatalf("two of three refusing: panic %v, routable %d, reason %q", st.Panic, st.Routable, st.PanicReason)
	}
	// The refusing two drained: the pool is s2 alone, routable, and panic
	// routing holds on for a second. Meanwhile the reason must not say
	// "1 of 3" (a read makes the router count again).
	for _, name := range []string{"s0", "s1"} {
		if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/"+name+"/drain", ""); code != http.StatusOK {
			t.Fatalf("drain %s: HTTP %d %s", name, code, body)
		}
	}
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	if st = h.status(); st.Panic && !strings.HasPrefix(st.PanicReason, "1 of 1 endpoint routable again (2 drained not counted), at or above") {
		t.Fatalf("panic routing holding on with s2 alone routable: reason %q", st.PanicReason)
	}
	// The episode's worst stays, through its recovery and after its end: a
	// console that saw only the recovery shows it.
	if !strings.HasPrefix(st.PanicWorst, "1 of 3 endpoints routable, below") {
		t.Fatalf("panic_worst %q while the reason is %q, want the episode's 1 of 3", st.PanicWorst, st.PanicReason)
	}
	for _, name := range []string{"s0", "s1"} {
		if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/"+name+"/undrain", ""); code != http.StatusOK {
			t.Fatalf("undrain %s: HTTP %d %s", name, code, body)
		}
	}

	refuse("s2")
	st = settled(0)
	if !st.Panic || st.Routable != 0 || !strings.HasPrefix(st.PanicReason, "0 of 3 endpoints routable") {
		t.Fatalf("every endpoint refusing: panic %v, routable %d, reason %q; want it to say 0 of 3", st.Panic, st.Routable, st.PanicReason)
	}
	if st.PanicWorst != st.PanicReason {
		t.Fatalf("panic_worst %q at the episode's fewest routable, reason %q", st.PanicWorst, st.PanicReason)
	}
	// Panic routing has no endpoint left to send a read to: the status says
	// so, endpoint by endpoint (the console's NO ROUTABLE ENDPOINT reads it).
	for _, ep := range st.Endpoints {
		if !ep.Refusing {
			t.Errorf("%s: refusing %v in /v1/status, want true", ep.Name, ep.Refusing)
		}
	}
}

// The console's header counts routable endpoints against every endpoint
// but the shadows ("1/4 routable"); panic routing's pool leaves the
// drained out ("1 of 3 endpoints routable"). Seen at once on one screen,
// one endpoint drained and another broken, the two figures contradicted
// each other: panic_reason (the banner, the event, /v1/status) says which
// endpoints it does not count, so that its figures add up to the header's.
func TestPanic_ReasonSaysTheDrainedEndpointsItDoesNotCount(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Breaker.Cooldown = time.Minute // no half-open trial during the test
	}, sim.Config{}, sim.Config{}, sim.Config{}, sim.Config{Latency: fixed(2 * time.Millisecond)})
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s0/drain", ""); code != http.StatusOK {
		t.Fatalf("drain s0: HTTP %d %s", code, body)
	}
	for _, name := range []string{"s1", "s2"} {
		if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/"+name+"/fault", `{"mode":"refused"}`); code != http.StatusOK {
			t.Fatalf("inject refused on %s: HTTP %d %s", name, code, body)
		}
	}
	const want = "1 of 3 endpoints routable (1 drained not counted), below router.panic_threshold 0.50"
	var st engine.Snapshot
	testutil.WaitUntil(t, 5*time.Second, "s1's and s2's breakers to open and panic routing to count the pool", func() bool {
		h.call(1, "eth_getBalance", addr, "latest")
		st = h.status()
		return st.Panic && st.Routable == 1 && strings.HasPrefix(st.PanicReason, "1 of 3 ")
	})
	if st.PanicReason != want {
		t.Fatalf("s0 drained, s1 and s2 refusing: panic_reason %q, want %q", st.PanicReason, want)
	}
	// What the header shows beside it: routable of every endpoint but the
	// shadows, 1/4; the reason's pool and those it leaves out add up to it.
	if st.Serving() != 4 {
		t.Fatalf("the header would say %d/%d routable, want 1/4", st.Routable, st.Serving())
	}
	var entered string
	for _, ev := range h.events() {
		if ev.Type == engine.EventPool && ev.To == "panic" {
			entered = ev.Message
		}
	}
	if !strings.HasPrefix(entered, "panic routing: "+want+"; ") {
		t.Fatalf("panic routing's event says %q, want it to start %q", entered, "panic routing: "+want)
	}
	// The drained one back and the others healthy: the reason counts the
	// pool as it is now, and says panic only holds on.
	if code, body := h.adminDo(http.MethodPost, "/v1/endpoints/s0/undrain", ""); code != http.StatusOK {
		t.Fatalf("undrain s0: HTTP %d %s", code, body)
	}
	testutil.WaitUntil(t, 2*time.Second, "the pool to be counted with s0 back", func() bool {
		st = h.status()
		return !st.Panic || strings.HasPrefix(st.PanicReason, "2 of 4 endpoints routable again, at or above")
	})
	if st.Panic && strings.Contains(st.PanicReason, "not counted") {
		t.Fatalf("nothing drained, and the reason says %q", st.PanicReason)
	}
}
