package engine

import (
	"sync"
	"time"
)

// provenConcurrency is how many requests at once an endpoint has been seen
// to answer at its usual pace. The router's load factor, 1 + in_flight,
// takes an endpoint for one that serves a request at a time (the peak-EWMA
// cost of Finagle and Linkerd): for a provider serving thousands at once it
// sent the third of 20 parallel reads to an endpoint three times slower,
// and a page of 20 reads took 121 ms against 32 ms sent to the fastest
// endpoint directly (seeds audit, stop 56). The factor is now
// 1 + in_flight ÷ proven: each request in flight costs a share of the
// proven. (Free up to proven, 1 + max(0, in_flight + 1 − proven) ÷ proven,
// alike endpoints gave all their reads to one while it was a little
// quicker, stop 56.) proven is the most exchanges in flight
// (the answer's own included) at which its recent answers took about what
// those sent alone did. Its own latency figure cannot be the measure: that
// figure takes in the waits of a node serving one request at a time, which
// then proved ten. An endpoint whose answers slow down as work piles up
// never earns it (such a node stays at 1, the old factor), and one that
// earned it grows it a step at a time, since the router sends it only a
// little more than it has proven.
type provenConcurrency struct {
	mu sync.Mutex
	// byLoad[k] holds the answers sent with 2^k to 2^(k+1)−1 exchanges in
	// flight (the last bucket: that many or more).
	byLoad [concurrencyBuckets]loadBucket
}

// loadBucket is what the answers sent at one level of load took lately.
type loadBucket struct {
	took     float64 // moving average, nanoseconds
	at       time.Time
	most     int64 // the most exchanges in flight among them, since mostAt
	mostAt   time.Time
	answered int
}

const (
	concurrencyBuckets = 10
	// concurrencySpan: how long a level of load's answers count.
	concurrencySpan = time.Minute
	// concurrencyPaceFactor: answers sent with one or two others in flight
	// that took at most this many times those sent alone came at the
	// endpoint's usual pace (a node serving one at a time takes 1.5 to 3
	// times as long with one or two ahead); each level of load above may
	// take concurrencyLevelSlack more, since rpcdash and the client have
	// more to do at once too (twice as long for 16 to 31 at once, where
	// such a node takes 16 to 31 times).
	concurrencyPaceFactor = 1.3
	concurrencyLevelSlack = 0.2
	// concurrencyAnswers: the answers a level needs within the span to
	// count.
	concurrencyAnswers = 3
	// concurrencyWeight: the weight of an answer in its level's average.
	concurrencyWeight = 0.25
)

func loadLevel(inFlight int64) int {
	k := 0
	for inFlight > 1 && k < concurrencyBuckets-1 {
		inFlight >>= 1
		k++
	}
	return k
}

// add notes an answer that took took, sent with inFlight exchanges in
// flight (its own included).
func (c *provenConcurrency) add(at time.Time, inFlight int64, took time.Duration) {
	if inFlight < 1 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := &c.byLoad[loadLevel(inFlight)]
	if b.answered == 0 || at.Sub(b.at) > concurrencySpan {
		b.took, b.answered = float64(took), 0
	} else {
		b.took += concurrencyWeight * (float64(took) - b.took)
	}
	b.at = at
	b.answered++
	if inFlight > b.most || at.Sub(b.mostAt) > concurrencySpan {
		b.most, b.mostAt = inFlight, at
	}
}

// at is the concurrency proven by now (at least 1): the most exchanges in
// flight of the highest level of load, each level up to it heard from
// within concurrencySpan, whose answers took about what those of the
// lowest did (alone, or with one or two others: a level that slowed
// cannot be the measure).
func (c *provenConcurrency) at(now time.Time) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	recent := func(b *loadBucket) bool { return b.answered >= concurrencyAnswers && now.Sub(b.at) <= concurrencySpan }
	base := -1
	for k := range 2 {
		if recent(&c.byLoad[k]) {
			base = k
			break
		}
	}
	if base < 0 {
		return 1
	}
	proven := int64(1)
	for k := base + 1; k < concurrencyBuckets; k++ {
		b := &c.byLoad[k]
		limit := (concurrencyPaceFactor + concurrencyLevelSlack*float64(k-1)) * c.byLoad[base].took
		if !recent(b) || b.took > limit {
			break
		}
		proven = max(proven, b.most)
	}
	return proven
}

// concurrencyNow is the concurrency the router credits ep with, against its
// latency figure pace: none (1) while it has had work in flight and said
// nothing for twice that figure, so that requests piling up on an endpoint
// that stopped answering drain to the others as fast as before.
func (ep *endpoint) concurrencyNow(now time.Time, pace time.Duration) int64 {
	if pace <= 0 || ep.silentFor(now) > 2*max(pace, time.Millisecond) {
		return 1
	}
	return ep.concurrency.at(now)
}

// concurrencyLeadRatio: how many times quicker than every other endpoint
// one must be for its proven concurrency to count.
const concurrencyLeadRatio = 2

// concurrencyLeader is the index of the endpoint credited with its proven
// concurrency among n endpoints whose latency figures lat gives (ms;
// negative: unmeasured or not weighed, left out): the quickest, when it is concurrencyLeadRatio
// times quicker than each of the others; -1 when none is. Between
// endpoints about as quick, the load factor 1 + in_flight shares the reads
// out as before: credited, each in turn took most of them while a little
// quicker, and the others' samples thinned out (stop 57: the forecast of
// a hedging trial lost its interval, and an endpoint idle beside a pool's
// slowdown was charged with it). Where one is that much quicker, sending
// to another costs a client more than waiting a turn on it.
func concurrencyLeader(n int, lat func(i int) float64) int {
	lead, best, second := -1, -1.0, -1.0
	for i := range n {
		switch l := lat(i); {
		case l < 0:
		case lead < 0 || l < best:
			second = best
			lead, best = i, l
		case second < 0 || l < second:
			second = l
		}
	}
	if lead < 0 || second < 0 || second < concurrencyLeadRatio*best {
		return -1
	}
	return lead
}
