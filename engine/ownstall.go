package engine

import "time"

// An answer that came in through a stall of rpcdash's own (a GC pause, a
// busy host, the process stopped) took the stall's time as well as the
// endpoint's: it may have sat unread while rpcdash did not run. Learnt, it
// stretches everything the endpoint's timing decides, for as long as the
// stats window holds it: the auto hedge delay (the primaries' quantile),
// the attempt deadlines (three times the p99), the score. Three stalls of
// 700 ms of the serve process (SIGSTOP) beside 20 ms endpoints took the
// auto delay from 60 to 375 ms and every learnt deadline from about
// 280 ms to 2.6 s, still 290 ms and 2.4 s half a minute later; on a box
// whose other processes starved rpcdash, the delay sat at hedge.max_delay
// (2 s) beside endpoints answering in 0.2 ms. Such an answer is not learnt,
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
	lost := e.lag.lostWithin(took)
	return lost >= stallSlack && lost >= took/2
}

// lostWithin is how much of the last d rpcdash lost to its own stalls: the
// lateness the ticker noted within it (a stall that began before d counted
// from d's start), with the one it has not woken from yet: as the process
// resumes, the answers that waited are read in any order with the
// ticker's wake-up, and one read first would see no stall noted.
func (m *lagMonitor) lostWithin(d time.Duration) time.Duration {
	now := time.Now()
	since := now.Add(-d)
	var pending time.Duration
	if w := m.woke.Load(); w != 0 {
		pending = max(now.Sub(time.Unix(0, w))-lagPeriod, 0)
	}
	if m.stallAt.Load() < since.UnixNano() {
		// No lateness of stallSlack or more within d: what the ticker
		// lost there is under a fifth of it, and the lock is skipped.
		return min(pending, d)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	lost := pending
	for _, s := range m.samples {
		if s.at.After(since) {
			lost += min(s.late, s.at.Sub(since))
		}
	}
	return min(lost, d)
}
