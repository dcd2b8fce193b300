package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A cold pool's first reads go by what the first probes timed, as its
// first writes do: before, reads took turns among the endpoints until each
// had five answers, and at one read a second over sims at 20, 60 and
// 100 ms 4 of the first 6 went to the slower two. One probe of each
// endpoint stands in for the probes rpcdash serve runs at start; with
// hedging on, the slower ones are measured by exploring hedges beside the
// reads instead.
func TestRouter_AColdPoolsFirstReadsGoByTheFirstProbes(t *testing.T) {
	t.Parallel()
	for _, hedging := range []bool{false, true} {
		name := map[bool]string{false: "hedging-off", true: "hedging-on"}[hedging]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// An answer timed through a stall of rpcdash's own teaches no
			// latency (timedOwnStall): on a loaded machine s1's one probe
			// may teach none, s1 then stands at the pool's best figure,
			// s0's, and read 0 rightly goes to s0 (two full test runs at
			// once; four processes at once, 9 of 160). Such a try is void.
			var h *harness
			untilJudged(t, func(try int) string {
				h = newHarness(t, func(c *engine.Config) {
					c.Hedge.Enabled = hedging
					c.Server.TraceRequests = 100
				}, sim.Config{Latency: fixed(100 * time.Millisecond)}, sim.Config{Latency: fixed(5 * time.Millisecond)},
					sim.Config{Latency: fixed(120 * time.Millisecond)})
				probeRounds(t, h, 1)
				for _, name := range []string{"s0", "s1", "s2"} {
					if h.endpoint(name).Latency.Count == 0 && try < 3 {
						return name + "'s probe taught no latency: it was timed through a stall of this process"
					}
				}
				return ""
			})
			const n = 10
			for i := range n {
				r := h.call(i, "eth_getBalance", addr, "latest")
				mustOK(t, r)
				if r.endpoint != "s1" {
					t.Fatalf("read %d of %d answered by %s, not s1, which one probe of each timed at 5 ms against 100 and 120 ms (%s)", i, n, r.endpoint, describe(h.trace(r.id)))
				}
			}
			t.Logf("%d reads, all answered by s1; answers s0 %d, s2 %d", n, h.endpoint("s0").Latency.Count, h.endpoint("s2").Latency.Count)
		})
	}
}
