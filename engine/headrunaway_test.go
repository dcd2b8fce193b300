package engine_test

import (
	"strings"
	"testing"
)

// An endpoint whose head runs ahead of the chain, gradually (a node on a
// fork that makes blocks faster, a proxy inventing heads), stayed within
// the pool's pace at every step, since the pace bound is measured from the
// pool head it set itself, and the pace from its own rises: at 1.9 blocks
// a second against the chain's 1, the two endpoints following the chain
// were lag-excluded in 6 s and clients handed blocks up to 35 ahead of it.
// Now the two, rising together, outvote it.
func TestHeads_AnEndpointRunningAheadOfTheOthersIsFlaggedNotFollowed(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	start := r.realHead()
	for i := 1; i <= 30; i++ {
		r.clock.Advance(1e9)
		real := r.realHead()
		r.eng.ObserveProbeHead("s0", start+(real-start)*19/10)
		r.eng.ObserveProbeHead("s1", r.sims[1].Head())
		r.eng.ObserveProbeHead("s2", r.sims[2].Head())
	}
	st := r.status()
	if st.MaxHead != r.realHead() {
		t.Fatalf("pool head %d, the chain's %d: the runaway s0 (%d) set it", st.MaxHead, r.realHead(), r.endpoint("s0").Head)
	}
	why, flagged := r.aheadExclusion("s0")
	if !flagged {
		t.Fatalf("s0, %d ahead of the chain: exclusions %q", r.endpoint("s0").Head-r.realHead(), r.endpoint("s0").Exclusions)
	}
	if evs := r.headEvents("s0"); len(evs) != 1 || !strings.Contains(evs[0], "ahead of s1, s2, whose heads rise together") {
		t.Fatalf("s0's head events: %q; want it flagged once, outrun by s1 and s2", evs)
	}
	for _, name := range []string{"s1", "s2"} {
		if ep := r.endpoint(name); ep.LagExcluded || !ep.Routable {
			t.Fatalf("%s, at the chain's head: lag %d, lag_excluded %v, routable %v", name, ep.Lag, ep.LagExcluded, ep.Routable)
		}
	}
	for i := range 10 {
		r.blockNumber(i)
	}
	t.Logf("s0 %d ahead: %s", r.endpoint("s0").Head-r.realHead(), why)
}

// A chain halt readmits an endpoint flagged ahead that keeps rising (a
// fork's node, a million blocks ahead) after probes.recover rises with the
// pool head standing still: the others may be the stuck ones. Once they
// move again together, it is flagged again; it kept the pool head, and
// the two lag-excluded, for as long as it rose.
func TestHeads_AForkReadmittedInAHaltIsFlaggedAgainWhenTheOthersMoveOn(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	const fork = 1_000_000
	probe := func() {
		r.eng.ObserveProbeHead("s0", r.realHead()+fork)
		r.eng.ObserveProbeHead("s1", r.sims[1].Head())
		r.eng.ObserveProbeHead("s2", r.sims[2].Head())
	}
	probe()
	if _, flagged := r.aheadExclusion("s0"); !flagged {
		t.Fatalf("s0 a million blocks ahead: exclusions %q", r.endpoint("s0").Exclusions)
	}
	r.sims[1].SetHeadFrozen(true)
	r.sims[2].SetHeadFrozen(true)
	for range 2 * r.eng.Config().Probes.Recover {
		r.clock.Advance(1e9)
		probe()
	}
	if _, flagged := r.aheadExclusion("s0"); flagged {
		t.Fatalf("the test needs s0 readmitted in the halt: exclusions %q", r.endpoint("s0").Exclusions)
	}
	r.sims[1].SetHeadFrozen(false)
	r.sims[2].SetHeadFrozen(false)
	// One round for them to rise, then probes.recover within the lag.
	for range 1 + r.eng.Config().Probes.Recover {
		r.clock.Advance(1e9)
		probe()
	}
	if st := r.status(); st.MaxHead != r.realHead() {
		t.Fatalf("pool head %d once s1 and s2 moved on, the chain's %d", st.MaxHead, r.realHead())
	}
	if _, flagged := r.aheadExclusion("s0"); !flagged {
		t.Fatalf("s0, the fork, once s1 and s2 moved on: exclusions %q", r.endpoint("s0").Exclusions)
	}
	for _, name := range []string{"s1", "s2"} {
		if ep := r.endpoint(name); ep.LagExcluded {
			t.Fatalf("%s moving with the chain: lag %d, lag_excluded", name, ep.Lag)
		}
	}
}

// Outvoted by two endpoints rising together 8 blocks behind it, an
// endpoint is flagged ahead; when the two then stop (their provider
// halted), it is the one still following the chain and is readmitted once
// they have stood still for twice the time the chain makes
// chain.max_head_lag blocks. It stayed flagged for good, judged against
// the stopped ones too, and clients were served the halted head (308
// blocks old after 5 minutes).
func TestHeads_AnEndpointOutvotedByEndpointsThatThenStopIsReadmitted(t *testing.T) {
	r := newHeadRig(t, 3, nil)
	r.warmUp()
	r.sims[1].SetHeadLag(8)
	r.sims[2].SetHeadLag(8)
	for range 10 {
		r.round()
	}
	if _, flagged := r.aheadExclusion("s0"); !flagged {
		t.Fatalf("s0, 8 ahead of s1 and s2 rising together: exclusions %q; the test needs it flagged", r.endpoint("s0").Exclusions)
	}
	r.sims[1].SetHeadFrozen(true)
	r.sims[2].SetHeadFrozen(true)
	for range 30 {
		r.round()
	}
	if _, flagged := r.aheadExclusion("s0"); flagged {
		t.Fatalf("s0 after s1 and s2 stood still 30 s: still flagged, %q", r.endpoint("s0").Exclusions)
	}
	if st := r.status(); st.MaxHead != r.realHead() {
		t.Fatalf("pool head %d, the chain's %d", st.MaxHead, r.realHead())
	}
	for i := range 5 {
		if _, rep := r.blockNumber(i); rep.endpoint != "s0" {
			t.Fatalf("eth_blockNumber answered by %s, which has stopped", rep.endpoint)
		}
	}
}
