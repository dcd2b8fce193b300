package sim

import (
	"slices"
	"sync"
	"time"
)

// serviceTime is how long the answer to a request arriving now takes: its
// wait for capacity, then a draw from the latency model (a tail time when
// it begins inside an incident window), plus any extra latency, its
// methods' included.
func (u *Upstream) serviceTime(s settings, reqs []request) time.Duration {
	wait := u.queue.wait(time.Now(), u.cfg.Capacity)
	window, shared := s.latency.Incidents(u.cfg.IncidentSeed).Window(u.cfg.Epoch.Since(u.cfg.Clock()))
	u.rngMu.Lock()
	var (
		d    time.Duration
		tail bool
	)
	if shared {
		d, tail = s.latency.tail(u.latRNG), true
	} else {
		d, tail = s.latency.draw(u.latRNG)
	}
	u.rngMu.Unlock()
	if wait > 0 || tail {
		u.counters.change(func(c *Counters) {
			if wait > 0 {
				c.Queued++
				c.QueueSeconds += wait.Seconds()
			}
			if tail {
				c.Tails++
			}
			if shared {
				c.IncidentTails++
				if !slices.Contains(c.IncidentWindows, window) {
					if len(c.IncidentWindows) == maxIncidentWindows {
						c.IncidentWindows = slices.Delete(c.IncidentWindows, 0, 1)
					}
					c.IncidentWindows = append(c.IncidentWindows, window)
				}
			}
		})
	}
	return wait + d + s.extra + s.methodLatency(reqs)
}

// methodLatency is the most SetMethodLatency adds to any of reqs.
func (s settings) methodLatency(reqs []request) time.Duration {
	var d time.Duration
	for _, r := range reqs {
		d = max(d, s.methodExtra[r.Method])
	}
	return d
}

// maxIncidentWindows bounds Counters.IncidentWindows (the newest are kept).
const maxIncidentWindows = 256

// admission paces an upstream with a Capacity: it starts one request every
// 1/Capacity and queues the others in arrival order, before their service
// time (a single server of that rate in front of the latency model). A
// request keeps its place when its client goes away: a cancelled duplicate
// still costs the upstream its slot, the full-work case of the load check.
type admission struct {
	mu   sync.Mutex
	next time.Time // when the next request may start
}

// wait returns how long a request arriving at now waits for its turn.
func (a *admission) wait(now time.Time, capacity float64) time.Duration {
	if capacity <= 0 {
		return 0
	}
	gap := time.Duration(float64(time.Second) / capacity)
	a.mu.Lock()
	defer a.mu.Unlock()
	start := a.next
	if start.Before(now) {
		start = now
	}
	a.next = start.Add(gap)
	return start.Sub(now)
}

// ResetQueue empties the capacity queue: the places that requests already
// gone still hold are given up (bench starts each row on an idle upstream).
func (u *Upstream) ResetQueue() {
	u.queue.mu.Lock()
	u.queue.next = time.Time{}
	u.queue.mu.Unlock()
}

// Reseed restarts the latency and fault draws from seed, as a new upstream
// with that seed would make them: bench gives every policy of a comparison
// the same sequences.
func (u *Upstream) Reseed(seed int64) {
	lat, fault := newRNGs(seed)
	u.rngMu.Lock()
	u.latRNG, u.faultRNG = lat, fault
	u.rngMu.Unlock()
}
