package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// failedBehind runs a read of the tip ranked s0, s1 (by pace) with every
// head current, where s0 falls 8 blocks behind (lag-excluded) during its
// attempt, then fails (HTTP 500); then turns s1 as turn says, with the
// engine's clock running as time does (how long s1 has been quiet is what
// decides), and returns the read's reply.
func failedBehind(t *testing.T, turn func(r *headRig)) (*headRig, reply) {
	t.Helper()
	g, url := newGatedFailure(t)
	r := newHeadRig(t, 2, func(c *engine.Config) {
		c.Endpoints[0].URL = url
		c.Server.RequestTimeout = 10 * time.Second
		c.Router.ExploreAfter = time.Hour
	})
	r.sims[1].SetLatency(fixed(20 * time.Millisecond))
	r.warmInOrder(6)
	r.warmUp()
	for _, name := range r.names {
		if ep := r.endpoint(name); ep.LagExcluded {
			t.Fatalf("%s lag-excluded after warm-up (lag %d)", name, ep.Lag)
		}
	}
	g.armed <- struct{}{}
	got := make(chan reply, 1)
	go func() { got <- r.call(1, "eth_getBalance", addr, "latest") }()
	<-g.arrived // ranked, its first attempt on s0
	r.sims[0].SetHeadFrozen(true)
	for range 8 {
		r.round()
	}
	if ep := r.endpoint("s0"); !ep.LagExcluded {
		t.Fatalf("s0 stuck 8 blocks: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
	}
	turn(r)
	defer r.clock.Run()()
	close(g.release)
	return r, <-got
}

// An endpoint whose attempt at a read of the tip failed, and which fell
// behind the chain's head while the read was in flight, is not asked that
// read again while a current endpoint is still working on it: its answer
// would be an old block relayed as current. The failover on s1 takes
// 600 ms, past its 250 ms attempt deadline and well within the second of
// quiet after which a stale endpoint may answer in its place
// (staleQuiet). Before: at s1's deadline s0 was asked again (retryFailed)
// and its old answer relayed.
func TestLag_AnEndpointFallingBehindMidReadIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	r, rep := failedBehind(t, func(r *headRig) { r.sims[1].SetLatency(fixed(600 * time.Millisecond)) })
	mustOK(t, rep)
	if rep.endpoint != "s1" {
		t.Fatalf("answered by %q after %d attempts in %s, s0 lagging %d blocks; want the current s1",
			rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond), r.endpoint("s0").Lag)
	}
}

// The same read with s1 hung: once s1 has been quiet a second, s0's old
// answer is the only one there is, and s0 is asked again rather than the
// read waiting out its deadline into an error.
func TestLag_AnEndpointFallingBehindMidReadIsAskedAgainBesideAHang(t *testing.T) {
	t.Parallel()
	r, rep := failedBehind(t, func(r *headRig) { r.sims[1].SetMode(sim.ModeHang) })
	mustOK(t, rep)
	if rep.endpoint != "s0" || rep.took > 3*time.Second {
		t.Fatalf("answered by %q after %d attempts in %s; want the lagging s0 (lag %d) once s1 has been quiet a second",
			rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond), r.endpoint("s0").Lag)
	}
}

// A hedge sent once every candidate has an attempt (hedge.max_extra as
// large as the pool) asks again an endpoint already working on the read:
// never, for a read of the tip, one that has fallen behind the chain's
// head since the read was ranked, while a current one works on it too.
// The read was ranked with both endpoints current; its primary's endpoint
// falls 8 blocks behind (lag-excluded), its first hedge goes to the other,
// and its second, a delay later, must go there again. Before: it went to
// the lagging one, ranked first when the read came, whose old answer
// could then win.
func TestLag_AHedgeAskingAgainSkipsAnEndpointFallenBehindMeanwhile(t *testing.T) {
	t.Parallel()
	hr, urls := newHeldReads(t)
	r := newHeadRig(t, 2, func(c *engine.Config) {
		c.Endpoints[0].URL, c.Endpoints[1].URL = urls[0], urls[1]
		c.Hedge.Enabled, c.Hedge.Delay, c.Hedge.MaxExtra = true, "1s", 2
		c.Hedge.Budget, c.Hedge.BudgetBurst = 1, 1000
		c.Server.RequestTimeout = 20 * time.Second
		// No deadline race: only the hedges ask.
		c.Breaker.AttemptTimeoutMin = 15 * time.Second
	})
	r.warmUp()
	got := make(chan reply, 1)
	go func() { got <- r.call(1, "eth_getBalance", addr, "latest") }()
	name := map[string]string{"a": "s0", "b": "s1"}
	first := name[<-hr.arrived]
	other := map[string]string{"s0": "s1", "s1": "s0"}[first]
	r.sims[map[string]int{"s0": 0, "s1": 1}[first]].SetHeadFrozen(true)
	for range 8 {
		r.round()
	}
	if ep := r.endpoint(first); !ep.LagExcluded {
		t.Fatalf("%s stuck 8 blocks: lag_excluded=%v lag=%d", first, ep.LagExcluded, ep.Lag)
	}
	var hedges []string
	for len(hedges) < 2 {
		select {
		case n := <-hr.arrived:
			hedges = append(hedges, name[n])
			continue
		case <-time.After(10 * time.Second):
		}
		break
	}
	close(hr.release)
	mustOK(t, <-got)
	if len(hedges) == 0 || hedges[0] != other {
		t.Fatalf("hedges sent to %v; want the first to %s (%s lagging, working on the primary)", hedges, other, first)
	}
	if len(hedges) < 2 || hedges[1] != other {
		t.Fatalf("hedges sent to %v; want the second to %s again (%s fallen %d blocks behind since the read came)", hedges, other, first, r.endpoint(first).Lag)
	}
}
