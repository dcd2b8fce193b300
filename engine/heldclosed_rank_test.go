package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint breaker.max_open_share holds closed is ranked last: it
// failed enough to open, and only the cap keeps it in the pool. Its cost
// did not say so (its failure rate is 0 below min_attempts, and later
// small beside its past successes), so it took turns with the healthy
// endpoint. Seen live: one endpoint open, another resetting every
// connection mid-answer and held closed, 10 of the last 60 reads went to
// it first and failed over, p99 115 ms against 67 ms for a client of the
// healthy endpoint alone.
func TestRouter_EndpointHeldClosedByTheCapIsNotGivenReadsFirst(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	h := newClockedHarness(t, clock, func(c *engine.Config) { c.Breaker.MaxOpenShare = 0.5 },
		sim.Config{}, sim.Config{}, sim.Config{})
	h.sims[0].SetMode(sim.ModeError)
	h.sims[1].SetMode(sim.ModeError)
	for _, name := range []string{"s0", "s1"} {
		for range 3 {
			if res, err := h.eng.Probe(context.Background(), name, "eth_blockNumber", nil); err != nil || res.OK {
				t.Fatalf("probe of a failing %s: ok=%v err=%v", name, res.OK, err)
			}
		}
	}
	if b := h.endpoint("s1").Breaker; b.State != engine.BreakerClosed || !b.HeldClosed {
		t.Fatalf("s1: breaker %s, held_closed %v; want closed and held closed by the cap", b.State, b.HeldClosed)
	}
	for i := range 10 {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.endpoint != "s2" || r.attempts != 1 {
			t.Fatalf("read %d answered by %s after %d attempts; want s2 at once (s0 open, s1 held closed and failing)", i, r.endpoint, r.attempts)
		}
	}
	// A batch's reads go upstream as one batch: not to s1 either.
	for i := range 4 {
		mustOK(t, h.post(fmt.Sprintf(`[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["%s","latest"]},`+
			`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["%s","0x%x"]}]`, addr, addr, 100+i)))
	}
	if n := h.sims[1].Counters().ByMethod["eth_getBalance"]; n != 0 {
		t.Fatalf("s1, held closed, was sent %d reads of the batches", n)
	}
}
