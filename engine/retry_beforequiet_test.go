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

// A read whose one routable endpoint answers HTTP 500, with the other
// endpoint's breaker open and that endpoint gone quiet (hung), asks the
// first again at once, as a client of it asking again would, rather than
// waiting out the quiet one's attempt deadline first: with steady drained
// and tail hung, each of flaky's 500s (5 %) held its read 2.2 s, tail's
// cold deadline, where a client of flaky had its answer in 60 ms.
func TestRetry_ReadAsksTheEndpointThatFailedBeforeOneGoneQuiet(t *testing.T) {
	var failNext atomic.Bool
	var balances atomic.Int64
	once := scriptedUpstream(t, func(w http.ResponseWriter, id json.RawMessage, method string) bool {
		if method != "eth_getBalance" {
			return false
		}
		balances.Add(1)
		if !failNext.CompareAndSwap(true, false) {
			return false
		}
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"upstream error"}}`)
		return true
	})
	const cooldown = 300 * time.Millisecond
	h := newHarness(t, func(c *engine.Config) {
		takeTurns(c)
		c.Breaker.Cooldown = cooldown
		c.Endpoints[0].URL = once.URL
	}, sim.Config{}, sim.Config{})
	h.eng.UseProbeTrials() // no client read is a trial of s1: it stays out
	s1 := h.sims[1]
	readUntilOpen(t, h, "s1", s1)
	s1.SetMode(sim.ModeHang)
	time.Sleep(2 * cooldown) // s1 gone quiet: nothing heard from it for a cooldown

	before, beforeS1 := balances.Load(), s1.MethodCount("eth_getBalance")
	failNext.Store(true)
	r := h.call(1, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if got := s1.MethodCount("eth_getBalance") - beforeS1; got != 0 || r.attempts != 2 || balances.Load()-before != 2 {
		t.Fatalf("s0's 500 beside s1 quiet: %d attempts (s0 %d, s1 %d) in %v; want s0 asked again at once, 2 attempts, none to s1",
			r.attempts, balances.Load()-before, got, r.took.Round(time.Millisecond))
	}
	if st := h.endpoint("s1").Breaker.State; st == engine.BreakerClosed {
		t.Fatalf("s1's breaker %s: the test needs it open", st)
	}
}
