package engine_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// failOverAfter runs a read of the tip ranked s0, s1, s2 (by pace) with
// every endpoint routable; while its first attempt holds on s0, mid takes
// s1 out of routing as a probe or an operator would; then s0 fails (HTTP
// 500) and the read fails over. A read ranked after mid goes to s0, then
// s2.
func failOverAfter(t *testing.T, mid func(r *headRig)) (*headRig, reply) {
	t.Helper()
	g, url := newGatedFailure(t)
	let := releaseOnce(t, g.release)
	r := newHeadRig(t, 3, func(c *engine.Config) {
		c.Endpoints[0].URL = url
		noRaceWhileHeld(c)
		c.Router.ExploreAfter = time.Hour
	})
	r.sims[1].SetLatency(fixed(20 * time.Millisecond))
	r.sims[2].SetLatency(fixed(80 * time.Millisecond))
	r.warmInOrder(6)
	r.warmUp()
	if st := r.status(); st.Routable != 3 {
		t.Fatalf("%d routable after warm-up; want 3", st.Routable)
	}
	g.armed <- struct{}{}
	got := r.readHeldOnS0(g.arrived)
	mid(r)
	let()
	rep := <-got
	if tr := r.trace(rep.id); len(tr.Attempts) > 0 && tr.Attempts[0].Overdue {
		t.Fatalf("s0's attempt passed its deadline while held (%s): the test took longer than noRaceWhileHeld allows", describe(tr))
	}
	return r, rep
}

// noRaceWhileHeld keeps a read held on s0 from passing its attempt
// deadline, which runs in real time, while the test acts: a loaded
// machine's steps reached a 5 s one (s0 charged and raced, then ranked
// after s2 until its held answer came).
func noRaceWhileHeld(c *engine.Config) {
	c.Server.RequestTimeout = time.Minute
	c.Breaker.AttemptTimeoutMin = time.Minute
}

// releaseOnce returns a function closing release once, which the test's
// cleanup also calls (before the upstream's Close, which waits for the
// handler it holds): a test failing early lets its held read go.
func releaseOnce(t *testing.T, release chan struct{}) func() {
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	t.Cleanup(let)
	return let
}

// wrongChain has a probe find name on another chain.
func (r *headRig) wrongChain(name string) {
	r.eng.Exclude(name, engine.ExcludeWrongChain, "on chain id 0x5 (5), pool is on 0x1 (1)")
}

// An endpoint found on the wrong chain while a read is in flight answers
// none of it: rank never lists it, in panic routing neither, and its
// answer is another chain's. Before: the read's failover went to it as
// ranked, and its answer was relayed.
func TestChain_AnEndpointFoundOnTheWrongChainMidReadTakesNoMoreOfIt(t *testing.T) {
	t.Parallel()
	_, rep := failOverAfter(t, func(r *headRig) { r.wrongChain("s1") })
	mustOK(t, rep)
	if rep.endpoint != "s2" {
		t.Fatalf("answered by %q after %d attempts, s1 on the wrong chain; want s2", rep.endpoint, rep.attempts)
	}
}

// An endpoint a probe finds unhealthy while a read is in flight (a Solana
// node saying it is behind) takes none of its later attempts while a
// routable endpoint can: rank puts it after them, failover-only. Before:
// the failover went to it as ranked.
func TestHealth_AnEndpointFoundUnhealthyMidReadTakesNoMoreOfIt(t *testing.T) {
	t.Parallel()
	_, rep := failOverAfter(t, func(r *headRig) {
		r.eng.Exclude("s1", engine.ExcludeUnhealthy, "getHealth: Node is behind by 42 slots")
	})
	mustOK(t, rep)
	if rep.endpoint != "s2" {
		t.Fatalf("answered by %q after %d attempts, s1 unhealthy; want s2", rep.endpoint, rep.attempts)
	}
}

// An endpoint flagged ahead (a head far beyond the chain's pace) while a
// read is in flight takes none of its later attempts while a routable
// endpoint can: what it answers is not the chain's. Before: the failover
// went to it as ranked.
func TestChain_AnEndpointFlaggedAheadMidReadTakesNoMoreOfIt(t *testing.T) {
	t.Parallel()
	_, rep := failOverAfter(t, func(r *headRig) {
		r.sims[1].SetHeadAhead(1_000_000)
		r.probeAll()
		if _, ok := r.aheadExclusion("s1"); !ok {
			t.Errorf("s1 a million blocks ahead is not flagged: %v", r.endpoint("s1").Exclusions)
		}
	})
	mustOK(t, rep)
	if rep.endpoint != "s2" {
		t.Fatalf("answered by %q after %d attempts, s1 flagged ahead; want s2", rep.endpoint, rep.attempts)
	}
}

// An endpoint made a shadow while a read is in flight answers none of it:
// a shadow answers no client. Before: the failover went to it as ranked.
func TestShadow_AnEndpointMadeShadowMidReadAnswersNoneOfIt(t *testing.T) {
	t.Parallel()
	_, rep := failOverAfter(t, func(r *headRig) {
		if _, err := r.eng.SetRole(engine.ActorAdmin, "s1", engine.RoleShadow, nil); err != nil {
			t.Error(err)
		}
	})
	mustOK(t, rep)
	if rep.endpoint != "s2" {
		t.Fatalf("answered by %q after %d attempts, s1 a shadow; want s2", rep.endpoint, rep.attempts)
	}
}

// An endpoint whose attempt at a read failed, found on the wrong chain
// since, is not asked the read again: its answer is another chain's.
// Ranked s0, s1; s0 fails; the failover on s1 takes 600 ms (slowS1).
// Before: at s1's deadline s0 was asked again (retryFailed) and answered.
func TestChain_AnEndpointFoundOnTheWrongChainMidReadIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	_, rep := failedMidRead(t, func(r *headRig) { r.wrongChain("s0") }, slowS1)
	mustOK(t, rep)
	if rep.endpoint != "s1" {
		t.Fatalf("answered by %q after %d attempts in %s, s0 on the wrong chain; want s1", rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond))
	}
}

// A hedge that asks again an endpoint already working on the read
// (relaunch) never asks one found on the wrong chain since. Before: the
// second hedge went to it, ranked first when the read came.
func TestChain_AHedgeAskingAgainSkipsAnEndpointFoundOnTheWrongChainMeanwhile(t *testing.T) {
	t.Parallel()
	first, hedges := hedgeAgainAfter(t, func(r *headRig, first string) { r.wrongChain(first) })
	other := map[string]string{"s0": "s1", "s1": "s0"}[first]
	if len(hedges) < 2 || hedges[0] != other || hedges[1] != other {
		t.Fatalf("hedges sent to %v; want both to %s (%s on the wrong chain since the read came, working on the primary)", hedges, other, first)
	}
}

// An endpoint that started backing off after a 429 (here a probe's) while
// a read is in flight is not asked it before its back-off ends while a
// routable endpoint can answer: it asked to be left alone, and a request
// to it spends the quota that limits it. Before: the failover went to it
// as ranked, met another 429, and only then went to s2 (3 attempts).
func TestRateLimit_AnEndpointBackingOffSinceTheRankingIsNotAskedMeanwhile(t *testing.T) {
	t.Parallel()
	_, rep := failOverAfter(t, func(r *headRig) {
		r.sims[1].SetRetryAfter(30 * time.Second)
		r.sims[1].SetMode(sim.ModeRateLimit)
		r.eng.Probe(context.Background(), "s1", "eth_blockNumber", nil)
		if r.endpoint("s1").BackoffUntil.IsZero() {
			t.Error("s1 not backing off after its probe's 429")
		}
	})
	mustOK(t, rep)
	if rep.endpoint != "s2" || rep.attempts != 2 {
		t.Fatalf("answered by %q after %d attempts, s1 backing off; want s2 after 2 (s0's, s2's)", rep.endpoint, rep.attempts)
	}
}

// An endpoint found on the wrong chain while it works on a read does not
// answer it: what it answers then is another chain's, and the read fails
// over as after a failure. The read's attempt on s0 (the fastest) is held
// while a probe finds s0 on the wrong chain, then s0 answers. Before: its
// answer was relayed.
func TestChain_AnAnswerFromAnEndpointFoundOnTheWrongChainMeanwhileIsNotRelayed(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	let := releaseOnce(t, release)
	armed := make(chan struct{}, 1)
	srv := scriptedUpstream(t, func(w http.ResponseWriter, id json.RawMessage, method string) bool {
		if method != "eth_getBalance" {
			return false
		}
		select {
		case <-armed:
		default:
			return false
		}
		arrived <- struct{}{}
		<-release
		return false // answered "0x1"
	})
	r := newHeadRig(t, 2, func(c *engine.Config) {
		c.Endpoints[0].URL = srv.URL
		noRaceWhileHeld(c)
		c.Router.ExploreAfter = time.Hour
	})
	r.sims[1].SetLatency(fixed(20 * time.Millisecond))
	r.warmInOrder(6)
	r.warmUp()
	armed <- struct{}{}
	got := r.readHeldOnS0(arrived)
	r.wrongChain("s0")
	let()
	rep := <-got
	mustOK(t, rep)
	if rep.endpoint != "s1" {
		t.Fatalf("answered by %q after %d attempts, s0 found on the wrong chain before it answered; want s1", rep.endpoint, rep.attempts)
	}
}

// An endpoint whose back-off for the read's method started while the read
// is in flight (another client's read of it met a 429) is not asked it
// before that back-off ends while a routable endpoint can answer, as one
// whose whole back-off started meanwhile is not. Before: the failover went
// to it as ranked, met another 429, and only then went to s2 (3 attempts).
func TestRateLimit_AnEndpointBackingOffTheMethodSinceTheRankingIsNotAskedMeanwhile(t *testing.T) {
	t.Parallel()
	_, rep := failOverAfter(t, func(r *headRig) {
		r.sims[1].SetRetryAfter(30 * time.Second)
		r.sims[1].SetMode(sim.ModeRateLimit)
		// Another client's read, which only s1 may take, meets its 429:
		// s1 backs off eth_getBalance, and only it.
		for _, name := range []string{"s0", "s2"} {
			if err := r.eng.Drain(engine.ActorAdmin, name); err != nil {
				t.Fatal(err)
			}
		}
		if rep := r.call(9, "eth_getBalance", addr, "latest"); rep.status != http.StatusTooManyRequests {
			t.Errorf("a read only s1 may take: HTTP %d from %q; want s1's 429", rep.status, rep.endpoint)
		}
		for _, name := range []string{"s0", "s2"} {
			if err := r.eng.Undrain(engine.ActorAdmin, name); err != nil {
				t.Fatal(err)
			}
		}
		if ep := r.endpoint("s1"); !ep.BackoffUntil.IsZero() {
			t.Errorf("s1 backs off whole until %s; want eth_getBalance alone", ep.BackoffUntil)
		}
	})
	mustOK(t, rep)
	if rep.endpoint != "s2" || rep.attempts != 2 {
		t.Fatalf("answered by %q after %d attempts, s1 backing off eth_getBalance; want s2 after 2 (s0's, s2's)", rep.endpoint, rep.attempts)
	}
}
