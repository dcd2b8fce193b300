package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A current endpoint that turns slow keeps the reads of the tip while an
// endpoint lagging behind the chain's head is the only other one: neither
// the deadline's race, nor a hedge, nor panic routing after its breaker
// opened may hand them to the lagging one, whose answers are old and are
// relayed as current. Before: every read past the deadline was raced on
// the lagging endpoint and won there; three such overdue attempts opened
// the current one's breaker (the lagging one counted as the pool's), and
// panic routing ranked lagging before an open breaker.
func TestLag_ASlowCurrentEndpointKeepsTheTipReads(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hedging bool
		// uncapped: breaker.max_open_share 1 lets s0's breaker open, and
		// the pool is in panic routing: an open breaker that still
		// answers goes before the lagging endpoint.
		uncapped bool
	}{{"hedging off", false, false}, {"hedging on", true, false}, {"breaker open, panic routing", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newHeadRig(t, 2, func(c *engine.Config) {
				if tc.hedging {
					hedgeOn("50ms")(c)
				}
				if tc.uncapped {
					c.Breaker.MaxOpenShare = 1
				}
			})
			r.warmUp()
			r.sims[1].SetHeadFrozen(true)
			for range 8 {
				r.round()
			}
			if ep := r.endpoint("s1"); !ep.LagExcluded {
				t.Fatalf("s1 stuck 8 blocks: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
			}
			mustInject(t, r.harness, "s0", `{"mode":"latency","latency":"600ms","duration":"1m"}`)
			const n = 12
			for i := range n {
				rep := r.call(i, "eth_getBalance", addr, "latest")
				mustOK(t, rep)
				if rep.endpoint != "s0" {
					t.Fatalf("read %d answered by %s, lagging %d blocks, in %s (attempts %d, hedged %v)",
						i, rep.endpoint, r.endpoint("s1").Lag, rep.took.Round(time.Millisecond), rep.attempts, rep.hedged)
				}
				if rep.took < 600*time.Millisecond {
					t.Fatalf("read %d in %s: not through the fault", i, rep.took)
				}
			}
			st, s0 := r.status(), r.endpoint("s0")
			switch {
			case tc.uncapped && (!st.Panic || s0.Breaker.State == engine.BreakerClosed):
				t.Fatalf("uncapped: panic %v, s0's breaker %s; the case wants both", st.Panic, s0.Breaker.State)
			case !tc.uncapped && st.Panic:
				t.Fatalf("panic routing: %s", st.PanicReason)
			case !tc.uncapped && s0.Breaker.State != engine.BreakerClosed:
				t.Fatalf("s0's breaker %s: the lagging s1 was counted as the pool's", s0.Breaker.State)
			}
		})
	}
}

// A current endpoint that has gone quiet (hung: nothing heard from it for
// a whole attempt deadline) leaves the lagging one's old answer as the
// only answer there is: the deadline's race still takes it, as before,
// rather than waiting out the request's deadline into an error.
func TestLag_AHungCurrentEndpointStillFailsOverToTheLaggingOne(t *testing.T) {
	r := newHeadRig(t, 2, nil)
	r.warmUp()
	r.sims[1].SetHeadFrozen(true)
	for range 8 {
		r.round()
	}
	mustOK(t, r.call(0, "eth_getBalance", addr, "latest")) // s0 heard now
	r.sims[0].SetMode(sim.ModeHang)
	// Quiet for longer than any attempt deadline (the engine's clock).
	r.clock.Advance(5 * time.Second)
	for i := range 3 {
		rep := r.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, rep)
		if rep.endpoint != "s1" || rep.took > 2*time.Second {
			t.Fatalf("read %d: answered by %s in %s; want the lagging s1 at the attempt deadline", i, rep.endpoint, rep.took)
		}
	}
}
