package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A read answered 429 (Retry-After 1 s) by its primary fails over to the
// other endpoint; when that one hangs, the read is raced back to the first
// as its back-off ends, as a client of it honouring the Retry-After would
// ask again, not at the hanging attempt's deadline. Seen in the console:
// flaky's 429s failed over to a hung tail, and each such read waited
// tail's deadline, 1.6 to 7 s, for an answer flaky gave 1 s after its 429.
func TestRateLimit_ReadFailedOverToAHangIsRacedBackWhenTheBackOffEnds(t *testing.T) {
	t.Parallel()
	var limitNext atomic.Bool
	s0 := scriptedUpstream(t, func(w http.ResponseWriter, id json.RawMessage, method string) bool {
		if method != "eth_getBalance" || !limitNext.CompareAndSwap(true, false) {
			return false
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32005,"message":"rate limited"}}`, id)
		return true
	})
	const deadline = 3 * time.Second
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[0].URL = s0.URL
		// s1's deadline, far past s0's back-off, and within half the
		// request's deadline (where a read races the next candidate at the
		// latest, race_ceiling.go).
		c.Breaker.AttemptTimeoutMin = deadline
		c.Server.RequestTimeout = 2 * deadline
	}, sim.Config{}, sim.Config{Latency: fixed(5 * time.Millisecond)})
	for i := range 50 { // s0, the quicker, takes the first attempts
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if d := h.endpoint("s1").Methods["eth_getBalance"].AttemptTimeout; d < deadline {
		t.Fatalf("s1's deadline %s, want at least %s", d, deadline)
	}
	h.sims[1].SetMode(sim.ModeHang)
	limitNext.Store(true)

	r := h.call(100, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if limitNext.Load() {
		t.Fatal("the read never reached s0: the 429 under test was not given")
	}
	if r.endpoint != "s0" || r.took >= 2*time.Second {
		t.Fatalf("answered by %q after %s in %d attempts; want s0 again once its 1 s back-off ended, well before s1's deadline %s", r.endpoint, r.took.Round(time.Millisecond), r.attempts, deadline)
	}
	t.Logf("read answered by s0 after %s (its 429's Retry-After 1 s; s1 hung, its deadline %s), %d attempts", r.took.Round(time.Millisecond), deadline, r.attempts)
}
