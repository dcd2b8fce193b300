package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// failingPair is two failing sims on a test clock with breaker.cooldown
// capCooldown, and a probe that must fail: with the shipped
// breaker.max_open_share, once s0 opens the cap holds s1 closed.
func failingPair(t *testing.T) (*harness, *testutil.Clock, func(name string)) {
	t.Helper()
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, func(c *engine.Config) { c.Breaker.Cooldown = capCooldown },
		sim.Config{}, sim.Config{})
	for _, s := range h.sims {
		s.SetMode(sim.ModeError)
	}
	probe := func(name string) {
		t.Helper()
		if res, err := h.eng.Probe(context.Background(), name, "eth_blockNumber", nil); err != nil || res.OK {
			t.Fatalf("probe of a failing %s: ok=%v err=%v", name, res.OK, err)
		}
	}
	return h, clock, probe
}

const capCooldown = 10 * time.Second

// An endpoint breaker.max_open_share keeps closed is said to be held once,
// when the cap first refuses it, and once more when that ends, however
// many failures ask again in between (the drill: 205 "breaker not opened"
// events in a row, one per probe every 5 s, flooding GET /v1/events).
func TestBreaker_CapRefusalIsOneEventPerEpisode(t *testing.T) {
	h, clock, probe := failingPair(t)
	for range 3 {
		probe("s0")
	}
	if tr := h.transitions("s0"); len(tr) != 1 || tr[0] != "closed>open" {
		t.Fatalf("s0 did not open after 3 failed probes: %v", tr)
	}
	const probes = 40 // one every probes.interval, 5 s: 200 s held closed
	for range probes {
		probe("s1")
		clock.Advance(5 * time.Second)
	}
	refused := poolEvents(h, "open refused")
	if len(refused) != 1 {
		t.Fatalf("s1 held closed by the cap through %d failed probes: %d open-refused events, want 1", probes, len(refused))
	}
	if ep := h.endpoint("s1"); ep.Breaker.State != engine.BreakerClosed {
		t.Fatalf("s1 %s: the cap should hold it closed", ep.Breaker.State)
	}

	clock.Advance(capCooldown) // no refusal for a cooldown: the episode ends
	var ended engine.Event
	testutil.WaitUntil(t, 5*time.Second, "the end of s1's held-closed episode", func() bool {
		for _, ev := range h.events() {
			if ev.Type == engine.EventPool && ev.Endpoint == "s1" && ev.From == "open refused" {
				ended = ev
				return true
			}
		}
		return false
	})
	if !strings.Contains(ended.Message, "38 opens refused") {
		t.Fatalf("the episode's end does not count the refusals: %q", ended.Message)
	}
	t.Logf("s1 held closed through %d failed probes: %d open-refused event, then %q", probes, len(refused), ended.Message)
}
