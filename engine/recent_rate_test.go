package engine

import (
	"math"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// With traffic stopped, the last minute's req/s only falls, to 0, and
// while traffic flows steadily it reads that traffic's rate. Read over the
// live sub-windows whatever they spanned, it rose when a quiet sub-window
// aged out: an outside tester saw a method's req/s go 10.07 → 10.91 after
// its traffic stopped.
func TestRecentTraffic_ReqPerSecondOnlyFallsOnceTrafficStops(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	r := newRecentTraffic(clock.Now)
	clock.Advance(20 * time.Second) // the engine ran 20 s before traffic came
	for range 400 {                 // 10 a second for 40 s
		r.observe("eth_call", 30*time.Millisecond, clientAnswered, 1)
		clock.Advance(100 * time.Millisecond)
	}
	// The last minute less a sub-window (55 s) held all 400.
	if got := r.pool.stats().PerSecond; math.Abs(got-400.0/55) > 0.2 {
		t.Fatalf("req/s %.2f after 40 s at 10 a second, want about %.2f", got, 400.0/55)
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
}
