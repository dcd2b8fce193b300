package engine

import (
	"math"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// req/s is the last 10 s's: with traffic stopped it only falls, to 0 within
// 10 s, and it reads a steady traffic's rate within 10 s of its coming.
// Read over the live sub-windows whatever they spanned, it rose when a
// quiet sub-window aged out (an outside tester saw a method's req/s go
// 10.07 → 10.91 after its traffic stopped); over the minute it read 16
// req/s 11 s after a 20/s load stopped, and 4.3 req/s 12 s after it came
// back.
func TestRecentTraffic_ReqPerSecondOnlyFallsOnceTrafficStops(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	r := newRecentTraffic(clock.Now)
	clock.Advance(20 * time.Second) // the engine ran 20 s before traffic came
	for range 400 {                 // 10 a second for 40 s
		r.observe("eth_call", 30*time.Millisecond, clientAnswered, 1)
		clock.Advance(100 * time.Millisecond)
	}
	if got := r.pool.stats().PerSecond; math.Abs(got-10) > 0.2 {
		t.Fatalf("req/s %.2f after 40 s at 10 a second, want about 10", got)
	}
	last := r.pool.stats().PerSecond
	for i := range 1000 { // 100 s with no traffic
		clock.Advance(100 * time.Millisecond)
		got := r.pool.stats().PerSecond
		if m := r.methodStats("eth_call").PerSecond; m != got {
			t.Fatalf("at %s without traffic: eth_call %.3f req/s, the pool %.3f: the only method must read as the pool", time.Duration(i+1)*100*time.Millisecond, m, got)
		}
		if got > last+1e-9 {
			t.Fatalf("at %s without traffic req/s rose %.3f → %.3f", time.Duration(i+1)*100*time.Millisecond, last, got)
		}
		last = got
	}
	if last != 0 {
		t.Fatalf("req/s %.3f after 100 s without traffic, want 0", last)
	}
	// It says so within 10 s of the traffic's stop, and of its return.
	for range 100 {
		r.observe("eth_call", 30*time.Millisecond, clientAnswered, 2)
		clock.Advance(100 * time.Millisecond)
	}
	if got := r.pool.stats().PerSecond; math.Abs(got-20) > 0.5 {
		t.Fatalf("req/s %.2f 10 s after 20 a second came, want about 20", got)
	}
	clock.Advance(10 * time.Second)
	if got := r.pool.stats().PerSecond; got != 0 {
		t.Fatalf("req/s %.2f 10 s after traffic stopped, want 0", got)
	}
}
