package sim

import (
	"sync/atomic"
	"time"
)

// Epoch is the origin of a scenario's incident clock. Upstreams that share
// one, the incident seed and the window length are slow in the same
// windows. Restart moves the origin, so that every run of a comparison
// meets the same incidents at the same offsets from its start. A nil Epoch
// is the Unix epoch: separate processes started with the same parameters
// (rpcdash sim, sim:// URLs) agree on the windows without talking.
type Epoch struct{ ns atomic.Int64 }

// NewEpoch starts an incident clock at t.
func NewEpoch(t time.Time) *Epoch {
	e := &Epoch{}
	e.Restart(t)
	return e
}

// Restart moves the origin to t.
func (e *Epoch) Restart(t time.Time) { e.ns.Store(t.UnixNano()) }

// Since is the time from the origin to t.
func (e *Epoch) Since(t time.Time) time.Duration {
	if e == nil {
		return time.Duration(t.UnixNano())
	}
	return time.Duration(t.UnixNano() - e.ns.Load())
}

// Incidents is a shared incident schedule: the clock from an Epoch is cut
// into windows of Length, and a Share of them are incidents. Which ones is
// a golden-ratio (Weyl) sequence started from the seed: window k is an
// incident when frac(u + k·φ) < Share. That spreads incidents evenly (a
// short run still meets its share) and nests them: with one seed, every
// incident of a smaller share is an incident of any larger one, so
// upstreams with different tail probabilities are still slow together.
type Incidents struct {
	Share  float64
	Length time.Duration
	Seed   int64
}

// Incidents is the schedule of l's shared tail events under seed.
func (l Latency) Incidents(seed int64) Incidents {
	l = l.withDefaults()
	return Incidents{Share: l.sharedShare(), Length: l.Incident, Seed: seed}
}

// golden is 2^64/φ, the Weyl sequence's step in 64-bit fixed point.
const golden = 0x9E3779B97F4A7C15

// Window returns the number of the window that the offset since the epoch
// falls in, and whether it is an incident.
func (in Incidents) Window(since time.Duration) (int64, bool) {
	if in.Share <= 0 || in.Length <= 0 {
		return 0, false
	}
	k := int64(since / in.Length)
	if since < 0 && since%in.Length != 0 {
		k-- // floor, not truncation, before the epoch
	}
	u := splitmix(uint64(in.Seed)) + uint64(k)*golden
	return k, float64(u>>11)/(1<<53) < in.Share
}

// Count is the number of incident windows that start in [from, to).
func (in Incidents) Count(from, to time.Duration) int {
	if in.Share <= 0 || in.Length <= 0 || to <= from {
		return 0
	}
	n := 0
	first, _ := in.Window(from)
	if first*int64(in.Length) < int64(from) {
		first++
	}
	for k := first; time.Duration(k)*in.Length < to; k++ {
		if _, ok := in.Window(time.Duration(k) * in.Length); ok {
			n++
		}
	}
	return n
}

// splitmix is SplitMix64's finaliser: it spreads nearby seeds apart.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}
