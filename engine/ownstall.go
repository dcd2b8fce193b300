package engine

import (
	"runtime"
	"time"
)

// An answer that came in through a stall of rpcdash's own (a GC pause, a
// busy host, the process stopped) took the stall's time as well as the
// endpoint's: it may have sat unread while rpcdash did not run. Learnt, it
// stretches everything the endpoint's timing decides, for as long as the
// stats window holds it: the auto hedge delay (the primaries' quantile),
// the attempt deadlines (three times the p99), the score. Three stalls of
// 700 ms of the serve process (SIGSTOP) beside 20 ms endpoints took the
// auto delay from 38 to 500 ms, still 389 ms half a minute later, and the
// learnt deadlines from 250 ms to 2.2-2.9 s; on a box whose other
// processes starved rpcdash, the delay sat at hedge.max_delay (2 s)
// beside endpoints answering in 0.2 ms. The stretched deadlines also held
// back, by accident, the races a starved rpcdash sends at its deadlines:
// the run-queue waits (probeQueue) make up for that where it counts, in
// overloaded and at the hedge timer. Such an answer is not learnt,
// as an attempt excused at its deadline for rpcdash's own slowness is not
// (ownSlow): it is counted (rates, accounting, the trace), not timed.

// timedOwnStall says whether an attempt that took took is timed by
// rpcdash's own slowness rather than its endpoint's: excused at its
// deadline as rpcdash's (ownSlow), or rpcdash lost, within its life, at
// least half of it to its own stalls (and at least stallSlack, the
// lateness a busy machine's timers have anyway). Lost time adds up the
// ticker's lateness, not only the longest: a process starved of CPU wakes
// every tick late, and an attempt that waits its turn at each step takes
// as long again.
func (e *Engine) timedOwnStall(a *attempt, took time.Duration) bool {
	if a.ownSlow.Load() {
		return true
	}
	return e.lostMostOf(took)
}

// lostMostOf says whether rpcdash lost at least half of the last d (and at
// least stallSlack) to its own slowness.
func (e *Engine) lostMostOf(d time.Duration) bool {
	lost := e.lag.lostWithin(d)
	return lost >= stallSlack && lost >= d/2
}

// lostWithin is how much of the last d rpcdash lost to its own slowness:
// the lateness the ticker noted within it (a stall that began before d
// counted from d's start) and the one it has not woken from yet (as the
// process resumes, the answers that waited are read in any order with the
// ticker's wake-up, and one read first would see no stall noted), and the
// run-queue waits probeQueue noted within it.
func (m *lagMonitor) lostWithin(d time.Duration) time.Duration {
	now := time.Now()
	since := now.Add(-d)
	var pending time.Duration
	if w := m.woke.Load(); w != 0 {
		pending = max(now.Sub(time.Unix(0, w))-lagPeriod, 0)
	}
	if m.stallAt.Load() < since.UnixNano() {
		// Nothing of stallSlack or more noted within d: the ticker and the
		// probe lost under half of it, and the lock is skipped.
		return min(pending, d)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	lost := pending
	for _, ring := range [...]*lagRing{&m.ticks, &m.queued} {
		for _, s := range ring.samples {
			if s.at.After(since) {
				lost += min(s.late, s.at.Sub(since))
			}
		}
	}
	return min(lost, d)
}

// probeQueue notes, every lagPeriod until stop closes, how long a
// goroutine waits its turn to run: a yield goes to the back of the run
// queue, where an answer read from the network waits too, and a process
// with more to run than CPU to run it on makes it wait there. The ticker
// does not see that wait: its wake-ups run before the queue.
func (m *lagMonitor) probeQueue(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(lagPeriod)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			start := time.Now()
			runtime.Gosched()
			if end := time.Now(); end.Sub(start) >= queueNoise {
				m.addQueued(end, end.Sub(start))
			}
		}
	}
}

// queueNoise is a run-queue wait too short to note.
const queueNoise = 100 * time.Microsecond

func (m *lagMonitor) addQueued(at time.Time, wait time.Duration) { m.note(&m.queued, at, wait) }
