package engine_test

import (
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A method in no table may be a submission (a bundle, a provider's own send
// call): it is sent once, whatever happens to it, unless methods.reads says
// it is a read.
func TestUnknownMethod_SentOnceUnlessConfiguredAsARead(t *testing.T) {
	t.Parallel()
	for _, asRead := range []bool{false, true} {
		name := "unknown"
		if asRead {
			name = "in-methods.reads"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) {
				c.Server.RequestTimeout = time.Second
				c.Hedge.Enabled = true
				if asRead {
					c.Methods.Reads = []string{"mev_sendBundle"}
				}
			}, sim.Config{}, sim.Config{}, sim.Config{})
			for _, s := range h.sims {
				s.SetMode(sim.ModeHang) // reads the body, then never answers
			}
			const n = 5
			replies := make([]reply, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					replies[i] = h.call(i, "mev_sendBundle", []string{"0x01"})
				}()
			}
			wg.Wait()
			var delivered int64
			for _, s := range h.sims {
				delivered += s.MethodCount("mev_sendBundle")
			}
			for _, r := range replies {
				if r.rpcError() == nil {
					t.Fatalf("a hung call was answered: %s", r.body)
				}
				if !asRead && (r.attempts != 1 || r.hedged) {
					t.Fatalf("unknown method sent %d times (hedged %v)", r.attempts, r.hedged)
				}
			}
			switch {
			case !asRead && delivered != n:
				t.Fatalf("%d calls delivered %d times upstream", n, delivered)
			case asRead && delivered <= n:
				t.Fatalf("configured as a read, %d calls were delivered only %d times: no failover", n, delivered)
			}
			t.Logf("%d calls delivered %d times upstream", n, delivered)
		})
	}
}
