package testutil

import (
	"sync"
	"sync/atomic"
	"time"
)

// Clock is a clock a test moves by hand, for code that takes a
// func() time.Time (pass c.Now); safe for concurrent use.
type Clock struct {
	ns  atomic.Int64
	loc *time.Location
}

// Epoch is a fixed start for test clocks (2025-01-01 UTC).
var Epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// NewClock is a Clock that reads start until Advance moves it.
func NewClock(start time.Time) *Clock {
	c := &Clock{loc: start.Location()}
	c.ns.Store(start.UnixNano())
	return c
}

// Now is the clock's time.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).In(c.loc) }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Run moves the clock on with real time, in 5 ms steps, until the returned
// stop (which may be called more than once): for a stretch of a test where
// how long something has lasted must be what it is.
func (c *Clock) Run() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-quit:
				return
			case now := <-tick.C:
				c.Advance(now.Sub(last))
				last = now
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
