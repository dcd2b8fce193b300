package testutil

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const stallTick = 5 * time.Millisecond

// StallWatch measures how long the test process could not run: a ticker
// that notes how late it wakes. A test comparing latencies measured in two
// periods uses it to tell a loaded machine's stall from the behaviour it
// asserts.
type StallWatch struct {
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	worst atomic.Int64
}

// WatchStalls starts a StallWatch, stopped at the latest when t ends.
func WatchStalls(t testing.TB) *StallWatch {
	w := &StallWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	t.Cleanup(func() { w.Stop() })
	return w
}

func (w *StallWatch) run() {
	defer close(w.done)
	tick := time.NewTicker(stallTick)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
			woke := time.Now()
			if late := woke.Sub(last) - stallTick; late > time.Duration(w.worst.Load()) {
				w.worst.Store(int64(late))
			}
			last = woke
		}
	}
}

// Stop ends the watch and returns the longest stall it saw. It may be
// called more than once.
func (w *StallWatch) Stop() time.Duration {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	return time.Duration(w.worst.Load())
}
