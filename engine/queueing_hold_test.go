package engine

import (
	"testing"
	"time"
)

// A pause of hedging for a pool slowdown holds while the only endpoint
// answering often enough to be judged is still slow: the others, given few
// reads, fall short of queueMinRecent answers, which says nothing of a
// drained queue. It resumed on that one alone and paused again at the next
// look (every endpoint 20× slower for 30 s at 20 reads/s: 37 pauses and
// resumes). It resumes once that endpoint is back at its pace, or nothing
// is heard at all.
func TestQueueGuard_HoldsItsPauseWhileTheOnlyEndpointJudgedIsStillSlow(t *testing.T) {
	e, clock := clockedEngine(t, 3, func(c *Config) { c.Hedge.Enabled = true })
	answer := func(ep int, d time.Duration, n int) {
		for range n {
			e.endpoints[ep].queueLatency.Record(d)
		}
	}
	look := func(resume bool) string {
		clock.Advance(queueCheckEvery)
		return e.queueing(resume)
	}
	next := func() { clock.Advance(queueSpan + queueSpan/queueBuckets) } // the last answers age out
	for ep := range 3 {
		answer(ep, 40*time.Millisecond, 20)
	}
	if why := look(false); why != "" {
		t.Fatalf("paused at the endpoints' usual pace: %s", why)
	}
	next()
	for ep := range 3 {
		answer(ep, 900*time.Millisecond, 12)
	}
	if why := look(false); why == "" {
		t.Fatalf("every endpoint 22× slower: not paused")
	}
	next()
	answer(0, 900*time.Millisecond, 3)
	answer(1, 900*time.Millisecond, 3)
	answer(2, 900*time.Millisecond, 12)
	if why := look(true); why == "" {
		t.Fatalf("resumed with c, the only endpoint judged, still 22× slower and a, b as slow with 3 answers each")
	} else {
		t.Logf("held: %s", why)
	}
	next()
	answer(2, 40*time.Millisecond, 12)
	if why := look(true); why != "" {
		t.Fatalf("c back at its pace: still paused: %s", why)
	}
	next()
	if why := look(true); why != "" {
		t.Fatalf("nothing heard: still paused: %s", why)
	}
}
