package engine_test

import (
	"slices"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// failedMidRead runs a read of the tip ranked s0, s1 (by pace) with every
// endpoint routable; during its attempt on s0, mid acts on s0, then s0
// fails (HTTP 500); s1 is turned as turn says, the engine's clock running
// as time does from then on (how long s1 has been quiet is what decides),
// and the read's reply is returned.
func failedMidRead(t *testing.T, mid, turn func(r *headRig)) (*headRig, reply) {
	t.Helper()
	g, url := newGatedFailure(t)
	let := releaseOnce(t, g.release)
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
	got := r.readHeldOnS0(g.arrived)
	mid(r)
	turn(r)
	defer r.clock.Run()()
	let()
	return r, <-got
}

// fallsBehind has name's head stand still for 8 blocks, probed each
// block: lag-excluded, stale for reads of the tip.
func (r *headRig) fallsBehind(name string) {
	r.t.Helper()
	r.sims[slices.Index(r.names, name)].SetHeadFrozen(true)
	for range 8 {
		r.round()
	}
	if ep := r.endpoint(name); !ep.LagExcluded {
		r.t.Fatalf("%s stuck 8 blocks: lag_excluded=%v lag=%d", name, ep.LagExcluded, ep.Lag)
	}
}

// slowS1 has s1 answer in 600 ms: past its 250 ms attempt deadline, well
// within the second of quiet after which a stale endpoint may answer in
// its place (staleQuiet).
func slowS1(r *headRig) { r.sims[1].SetLatency(fixed(600 * time.Millisecond)) }

// An endpoint whose attempt at a read of the tip failed, and which fell
// behind the chain's head while the read was in flight, is not asked that
// read again while a current endpoint is still working on it: its answer
// would be an old block relayed as current. The failover on s1 takes
// 600 ms (slowS1). Before: at s1's deadline s0 was asked again (retryFailed)
// and its old answer relayed.
func TestLag_AnEndpointFallingBehindMidReadIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	r, rep := failedMidRead(t, func(r *headRig) { r.fallsBehind("s0") }, slowS1)
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
	r, rep := failedMidRead(t, func(r *headRig) { r.fallsBehind("s0") }, func(r *headRig) { r.sims[1].SetMode(sim.ModeHang) })
	mustOK(t, rep)
	if rep.endpoint != "s0" || rep.took > 3*time.Second {
		t.Fatalf("answered by %q after %d attempts in %s; want the lagging s0 (lag %d) once s1 has been quiet a second",
			rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond), r.endpoint("s0").Lag)
	}
}

// hedgeAgainAfter runs a read of the tip on two endpoints that hold it
// until the test lets them answer, with hedge.max_extra 2 (as large as
// the pool): its primary goes to one (first), whose endpoint mid then
// acts on; its first hedge should go to the other, and its second, a
// delay later, asks again an endpoint already working on the read
// (relaunch). It returns first and where the hedges went.
func hedgeAgainAfter(t *testing.T, mid func(r *headRig, first string)) (string, []string) {
	t.Helper()
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
	mid(r, first)
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
	return first, hedges
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
	first, hedges := hedgeAgainAfter(t, func(r *headRig, first string) { r.fallsBehind(first) })
	other := map[string]string{"s0": "s1", "s1": "s0"}[first]
	if len(hedges) < 2 || hedges[0] != other || hedges[1] != other {
		t.Fatalf("hedges sent to %v; want both to %s (%s fallen 8 blocks behind since the read came, working on the primary)", hedges, other, first)
	}
}

// A stale candidate that answers no client since the read began (here
// drained) is nothing for the deadline's race to wait for: the race looks
// past it, and asks again the endpoint that failed, as it would without
// it. Ranked s0, s1, s2 (s2 8 blocks behind: stale); s2 is drained while
// s0 holds the read; s0 fails; the failover on s1 takes 600 ms (slowS1).
// Before: at s1's 250 ms deadline the race counted the drained s2 as a
// stale candidate waiting its turn (launchRace's waiting), held itself a
// deadline at a time and never asked s0 again: s1 answered at 600 ms.
func TestLag_ADrainedStaleCandidateDoesNotHoldTheRace(t *testing.T) {
	t.Parallel()
	g, url := newGatedFailure(t)
	let := releaseOnce(t, g.release)
	r := newHeadRig(t, 3, func(c *engine.Config) {
		c.Endpoints[0].URL = url
		c.Server.RequestTimeout = 10 * time.Second
		c.Router.ExploreAfter = time.Hour
	})
	r.sims[1].SetLatency(fixed(20 * time.Millisecond))
	r.sims[2].SetLatency(fixed(80 * time.Millisecond))
	r.warmInOrder(6)
	r.warmUp()
	r.fallsBehind("s2")
	g.armed <- struct{}{}
	got := r.readHeldOnS0(g.arrived)
	if err := r.eng.Drain(engine.ActorAdmin, "s2"); err != nil {
		t.Fatal(err)
	}
	slowS1(r)
	defer r.clock.Run()()
	let()
	rep := <-got
	mustOK(t, rep)
	t.Logf("answered by %s after %d attempts in %s", rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond))
	if rep.endpoint != "s0" || rep.attempts != 3 {
		t.Fatalf("answered by %q after %d attempts in %s; want s0 asked again at s1's deadline (3 attempts), s2 drained",
			rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond))
	}
}
