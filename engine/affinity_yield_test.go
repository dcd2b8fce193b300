package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// Writes follow the affinity to a somewhat slower endpoint (the nonce order
// is worth tens of milliseconds) and leave it for the normal order when it
// is far slower (affinityYieldMargin): s0 takes the first write while s1 is
// drained, then both are measured by reads, and ten more writes come.
func TestAffinity_WritesLeaveOnlyAFarSlowerEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		slower    time.Duration
		wantOnS0  int
		rationale string
	}{
		{100 * time.Millisecond, 11, "within the margin: every write stays with the endpoint that took the first"},
		{400 * time.Millisecond, 1, "past the margin: the writes after the first go to the far faster s1"},
	} {
		t.Run(fmt.Sprintf("s0-slower-by-%s", tc.slower), func(t *testing.T) {
			h := newHarness(t, nil, sim.Config{Latency: fixed(10*time.Millisecond + tc.slower)}, sim.Config{Latency: fixed(10 * time.Millisecond)})
			if err := h.eng.Drain(engine.ActorAdmin, "s1"); err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
			}
			if r := h.call(100, "eth_sendRawTransaction", rawTx(0)); r.endpoint != "s0" {
				t.Fatalf("the first write went to %q with s1 drained", r.endpoint)
			}
			if err := h.eng.Undrain(engine.ActorAdmin, "s1"); err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				mustOK(t, h.call(10+i, "eth_getBalance", addr, "latest"))
			}
			for i := 1; i <= 10; i++ {
				mustOK(t, h.call(100+i, "eth_sendRawTransaction", rawTx(i)))
			}
			onS0 := len(h.sims[0].Submissions())
			if total := onS0 + len(h.sims[1].Submissions()); total != 11 {
				t.Fatalf("%d submissions for 11 writes", total)
			}
			if onS0 != tc.wantOnS0 {
				t.Fatalf("s0 took %d of 11 writes, want %d (%s)", onS0, tc.wantOnS0, tc.rationale)
			}
			t.Logf("s0 %s slower: took %d of 11 writes (%s)", tc.slower, onS0, tc.rationale)
		})
	}
}
