package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// gatedFailure is a scripted endpoint whose next eth_getBalance, once
// armed, says it arrived and waits for the test before answering HTTP 500;
// every other call is answered "0x1".
type gatedFailure struct {
	armed   chan struct{} // one token: the next read is held
	arrived chan struct{}
	release chan struct{}
}

func newGatedFailure(t *testing.T) (*gatedFailure, string) {
	g := &gatedFailure{armed: make(chan struct{}, 1), arrived: make(chan struct{}, 1), release: make(chan struct{})}
	srv := scriptedUpstream(t, func(w http.ResponseWriter, id json.RawMessage, method string) bool {
		if method != "eth_getBalance" {
			return false
		}
		select {
		case <-g.armed:
		default:
			return false
		}
		g.arrived <- struct{}{}
		<-g.release
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"internal error"}}`, id)
		return true
	})
	return g, srv.URL
}

// readHeldOnS0 sends a read of the tip and returns, once its first
// attempt is held on the gated s0, the channel its reply comes on. The
// warm-up ranks s0 first by pace, but a loaded machine can measure it
// slower than s1 and rank it after: that read is answered elsewhere, and
// another is sent, at most 5 in all, rather than waiting for ever.
func (r *headRig) readHeldOnS0(arrived <-chan struct{}) <-chan reply {
	r.t.Helper()
	for i := range 5 {
		got := make(chan reply, 1)
		go func() { got <- r.call(1+i, "eth_getBalance", addr, "latest") }()
		select {
		case <-arrived:
			return got
		case rep := <-got:
			r.t.Logf("read %d answered by %s after %d attempts without reaching s0: ranked after it under load; sending another", i+1, rep.endpoint, rep.attempts)
		case <-time.After(30 * time.Second):
			r.t.Fatal("a read neither reached s0 nor was answered in 30 s")
		}
	}
	r.t.Fatal("5 reads in a row were ranked with s0 not first: the case cannot be set up")
	return nil
}

// warmInOrder gives each endpoint, alone in the pool in turn, n reads, so
// that every one has a latency figure of its own (the clock runs while
// they are read, as time does).
func (r *headRig) warmInOrder(n int) {
	r.t.Helper()
	stop := r.clock.Run()
	defer stop()
	for _, only := range r.names {
		for _, name := range r.names {
			var err error
			if name == only {
				err = r.eng.Undrain(engine.ActorAdmin, name)
			} else {
				err = r.eng.Drain(engine.ActorAdmin, name)
			}
			if err != nil {
				r.t.Fatal(err)
			}
		}
		for i := range n {
			if rep := r.call(i, "eth_getBalance", addr, "latest"); rep.endpoint != only {
				r.t.Fatalf("warm-up read answered by %q, want %s alone", rep.endpoint, only)
			}
		}
	}
	for _, name := range r.names {
		if err := r.eng.Undrain(engine.ActorAdmin, name); err != nil {
			r.t.Fatal(err)
		}
	}
}

// An endpoint that falls behind the chain's head while a read of the tip
// is in flight takes none of that read's later attempts while a current
// endpoint can: its old answer would be relayed as current. The read was
// ranked s0, s1, s2 (by pace) with every head current; s1 falls 8 blocks
// behind (lag-excluded) before s0 fails. Before: the failover went to s1,
// as ranked, and its answer was relayed; a read ranked a moment later
// went to s2.
func TestLag_AnEndpointFallingBehindMidReadTakesNoMoreOfIt(t *testing.T) {
	t.Parallel()
	r, rep := failOverAfter(t, func(r *headRig) {
		r.sims[1].SetHeadFrozen(true)
		for range 8 {
			r.round()
		}
		if ep := r.endpoint("s1"); !ep.LagExcluded {
			t.Fatalf("s1 stuck 8 blocks: lag_excluded=%v lag=%d", ep.LagExcluded, ep.Lag)
		}
	})
	mustOK(t, rep)
	if rep.endpoint != "s2" {
		t.Fatalf("answered by %q after %d attempts, s1 lagging %d blocks; want the current s2", rep.endpoint, rep.attempts, r.endpoint("s1").Lag)
	}
	// The order it was ranked in, to show the case happened: a read now
	// goes to s0 first, then s2.
	if next := r.call(2, "eth_getBalance", addr, "latest"); next.endpoint != "s0" {
		t.Errorf("next read answered by %q; want s0, the fastest. Costs: %s. Held read %s; next read %s; events %+v",
			next.endpoint, r.costs(), describe(r.trace(rep.id)), describe(r.trace(next.id)), r.events())
	}
}

// costs is each endpoint's routing cost and what it is made of, to say
// why a read went where it did.
func (r *headRig) costs() string {
	var parts []string
	for _, name := range r.names {
		ep := r.endpoint(name)
		s := ep.Score
		parts = append(parts, fmt.Sprintf("%s: cost %v (latency %v %s, failures %.2f of %d, tail ×%.2f, load ×%.2f, lag %d), breaker %s after %d failures, routable %v",
			name, s.Cost, s.Latency, s.LatencySource, s.FailureRate, s.Attempts, s.TailFactor, s.LoadFactor, s.Lag,
			ep.Breaker.State, ep.Breaker.ConsecutiveFailures, ep.Routable))
	}
	return strings.Join(parts, "; ")
}
