package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// The pool's last minute and its methods' are the same minute: with one
// method, the method's client figures are the pool's, whenever the method
// first came. A method's window counted from its first request aged out on
// its own boundaries: seen at a status of a serve run, one method's
// requests 2065 beside the pool's 1939, and 49.9 requests a second beside
// the pool's 23.5 for the same 1000 requests.
func TestRecentTraffic_MethodsShareThePoolsMinute(t *testing.T) {
	clock := testutil.NewClock(testutil.Epoch)
	r := newRecentTraffic(clock.Now)
	check := func(when string) {
		t.Helper()
		pool, m := r.pool.stats(), r.methodStats("eth_getBalance")
		if m != pool {
			t.Errorf("%s: eth_getBalance %+v, the pool %+v: the only method must read as the pool", when, m, pool)
		}
	}
	clock.Advance(3 * time.Second) // the method first comes 3 s after start
	r.observe("eth_getBalance", 30*time.Millisecond, true, 10)
	check("at 3s")
	clock.Advance(3 * time.Second)
	r.observe("eth_getBalance", 700*time.Millisecond, false, 10)
	check("at 6s")
	clock.Advance(20 * time.Second)
	check("at 26s")
	clock.Advance(36 * time.Second) // the pool's first 5 s have aged out
	check("at 62s")
	if got := r.pool.stats().Requests; got != 10 {
		t.Errorf("at 62s the pool's last minute holds %d requests, want the 10 of 6s", got)
	}
}
