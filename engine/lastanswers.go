package engine

import (
	"sync/atomic"
	"time"
)

// lastAnswers keeps the latencies of an endpoint's last three answers (of
// one method, or of all). Their median is a floor under the router's
// latency figure (routeLatencyOf): the stats window is minutes of memory,
// and an endpoint whose answers went from 20 ms to 2 s (readmitted after
// its trials, or slow without failing) kept a 20 ms figure until the slow
// answers were half the window, taking reads that waited 2 s all the
// while. Two slow answers in a row are enough to steer away; one tail
// answer between quick ones is not, and answers in time (exploration, a
// probe) bring the figure back.
type lastAnswers struct {
	n    atomic.Uint64
	took [3]atomic.Int64
}

func (l *lastAnswers) add(d time.Duration) {
	i := l.n.Add(1) - 1
	l.took[i%3].Store(int64(d))
}

// median is the median of the last three answers; false before three.
func (l *lastAnswers) median() (time.Duration, bool) {
	if l.n.Load() < 3 {
		return 0, false
	}
	a, b, c := l.took[0].Load(), l.took[1].Load(), l.took[2].Load()
	return time.Duration(a + b + c - min(a, b, c) - max(a, b, c)), true
}

// typical is the median of the last three answers, or with fewer the
// latest one or the mean of two; false before any.
func (l *lastAnswers) typical() (time.Duration, bool) {
	switch n := l.n.Load(); n {
	case 0:
		return 0, false
	case 1:
		return time.Duration(l.took[0].Load()), true
	case 2:
		return time.Duration(l.took[0].Load()+l.took[1].Load()) / 2, true
	}
	return l.median()
}
