package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// s1Lagging warms the rig up, then has s1's head stand still for 8
// blocks: left out of reads of the tip (lag_excluded).
func (r *headRig) s1Lagging() {
	r.t.Helper()
	r.warmUp()
	r.sims[1].SetHeadFrozen(true)
	for range 8 {
		r.round()
	}
	if ep := r.endpoint("s1"); !ep.LagExcluded {
		r.t.Fatalf("s1 stuck 8 blocks: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
	}
}

// A current endpoint that turns slow keeps the reads of the tip while an
// endpoint lagging behind the chain's head is the only other one: neither
// the deadline's race, nor a hedge, nor panic routing after its breaker
// opened may hand them to the lagging one, whose answers are old and are
// relayed as current. Before: every read past the deadline was raced on
// the lagging endpoint and won there; three such overdue attempts opened
// the current one's breaker (the lagging one counted as the pool's), and
// panic routing ranked lagging before an open breaker.
func TestLag_ASlowCurrentEndpointKeepsTheTipReads(t *testing.T) {
	t.Parallel()
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
					// Its first overdue attempt opens s0's breaker: reads
					// four at a time answer between the overdue ones, and
					// an answer starts a run of failures again.
					c.Breaker.MaxOpenShare, c.Breaker.Failures = 1, 1
				}
			})
			r.s1Lagging()
			// Enough answers that s0's attempt deadline is learnt (the
			// 250 ms floor), not the cold third of the request's deadline.
			for i := range 30 {
				mustOK(t, r.call(i, "eth_getBalance", addr, "latest"))
			}
			// 400 ms: past the 250 ms deadline, and well inside the second
			// of quiet after which the lagging s1 may answer in s0's place
			// (staleQuiet). At 600 ms, reads four at a time left s0 quiet
			// past that second now and then under a loaded CI (the
			// client's next reads late): read 12 went to s1.
			mustInject(t, r.harness, "s0", `{"mode":"latency","latency":"400ms","duration":"1m"}`)
			// The engine's clock runs as time does while clients read, four
			// at a time: how long s0 has been quiet is what decides, and a
			// clock standing still would hide it (the heads stay as the
			// last probes saw them).
			stopClock := r.clock.Run()
			defer stopClock()
			const n = 24
			lag := r.endpoint("s1").Lag
			parallel(n, 4, func(i int) {
				rep := r.call(i, "eth_getBalance", addr, "latest")
				if rep.status != 200 || rep.endpoint != "s0" || rep.took < 400*time.Millisecond {
					t.Errorf("read %d answered by %s (HTTP %d), lagging %d blocks, in %s (attempts %d, hedged %v); want s0 through its 400 ms fault",
						i, rep.endpoint, rep.status, lag, rep.took.Round(time.Millisecond), rep.attempts, rep.hedged)
				}
			})
			stopClock()
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
// its attempt deadline, at least a second) leaves the lagging one's old answer as the
// only answer there is: the deadline's race still takes it, as before,
// rather than waiting out the request's deadline into an error.
func TestLag_AHungCurrentEndpointStillFailsOverToTheLaggingOne(t *testing.T) {
	t.Parallel()
	r := newHeadRig(t, 2, nil)
	r.s1Lagging()
	for i := range 30 { // s0's deadline learnt (250 ms), s0 heard now
		mustOK(t, r.call(i, "eth_getBalance", addr, "latest"))
	}
	r.sims[0].SetMode(sim.ModeHang)
	defer r.clock.Run()()
	for i := range 4 {
		rep := r.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, rep)
		if rep.endpoint != "s1" || rep.took > 2*time.Second {
			t.Fatalf("read %d: answered by %s in %s; want the lagging s1 once s0 has been quiet a second", i, rep.endpoint, rep.took)
		}
	}
}
