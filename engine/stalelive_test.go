package engine_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A live attempt on an endpoint that has fallen behind the chain's head
// since the read of the tip began is no current attempt: its answer will
// be old too, and the read does not wait for it rather than race a stale
// candidate (noStale). Ranked: s0 current; s1 lagging (stale); s2 current
// but backing off eth_getBalance (asked only once its back-off is over).
// s0 holds the read, falls 8 blocks behind, and keeps answering probes
// (heard within the second of quiet, staleQuiet). Before: from s0's 2 s
// deadline on the race waited for s0, a deadline at a time, until s0 let
// the read go 6 s in, and s0's old answer was relayed. Now s1 takes the
// race, 4 s in (the first look is held a deadline as rpcdash's own stall:
// the test's clock jumped 8 s while s0 fell behind).
func TestLag_ALiveAttemptOnAnEndpointFallenBehindIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	var target atomic.Value // s0's sim, once started
	var armed atomic.Bool
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	let := releaseOnce(t, release)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if bytes.Contains(body, []byte("eth_getBalance")) && armed.CompareAndSwap(true, false) {
			arrived <- struct{}{}
			<-release
		}
		relay(w, target.Load().(string), body)
	}))
	t.Cleanup(front.Close)
	r := newHeadRig(t, 3, func(c *engine.Config) {
		c.Endpoints[0].URL = front.URL
		c.Server.RequestTimeout = 20 * time.Second
		// s0's deadline is past the moves below, so that its race comes
		// once s0 has fallen behind.
		c.Breaker.AttemptTimeoutMin = 2 * time.Second
		c.Router.ExploreAfter = time.Hour
	})
	target.Store(r.sims[0].URL())
	r.warmUp()
	r.fallsBehind("s1")
	// s2 backs off eth_getBalance: another client's read, which only s2
	// may take, meets its 429.
	r.sims[2].SetRetryAfter(time.Minute)
	r.sims[2].SetMode(sim.ModeRateLimit)
	r.eng.Drain(engine.ActorAdmin, "s0")
	r.eng.Drain(engine.ActorAdmin, "s1")
	if rep := r.call(1, "eth_getBalance", addr, "latest"); rep.status != http.StatusTooManyRequests {
		t.Fatalf("a read only s2 may take: HTTP %d from %q; want s2's 429", rep.status, rep.endpoint)
	}
	r.eng.Undrain(engine.ActorAdmin, "s0")
	r.eng.Undrain(engine.ActorAdmin, "s1")
	r.sims[2].SetMode(sim.ModeNormal)
	for i := range 5 {
		if rep := r.call(2+i, "eth_getBalance", addr, "latest"); rep.endpoint != "s0" {
			t.Fatalf("read answered by %q; want s0, the one routable for it", rep.endpoint)
		}
	}
	armed.Store(true)
	got := make(chan reply, 1)
	go func() { got <- r.call(10, "eth_getBalance", addr, "latest") }()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the read never reached s0")
	}
	r.sims[0].SetHeadFrozen(true)
	for range 8 {
		r.round()
	}
	if ep := r.endpoint("s0"); !ep.LagExcluded {
		t.Fatalf("s0 stuck 8 blocks: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
	}
	// s0 answers its probes throughout, as it would other clients' reads.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	probe := func() { r.eng.Probe(ctx, "s0", "eth_blockNumber", nil) }
	probe()
	stopClock := r.clock.Run()
	defer stopClock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
				probe()
			}
		}
	}()
	var rep reply
	select {
	case rep = <-got:
	case <-time.After(6 * time.Second):
		let()
		rep = <-got
	}
	let()
	cancel()
	wg.Wait()
	mustOK(t, rep)
	t.Logf("answered by %s after %d attempts in %s", rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond))
	if rep.endpoint != "s1" {
		t.Fatalf("answered by %q after %d attempts in %s, s0 lagging %d blocks since the read began; want s1 at s0's deadline",
			rep.endpoint, rep.attempts, rep.took.Round(time.Millisecond), r.endpoint("s0").Lag)
	}
}
