package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// The last minute's hedging is counted over the same minute as its
// latencies. The console's FIRE%, WIN% and amp read the since-start
// accounting: with hedging turned off, its methods panel kept reading
// "off … 8.0%" beside the minute's p99, for as long as the engine had run
// with hedging on (seen in a console audit).
func TestStatus_TheLastMinutesHedgingIsTheMinutes(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(time.Now())
	h := newClockedHarness(t, clock, func(c *engine.Config) {
		c.Hedge.Enabled = true
		c.Hedge.Delay = "5ms" // every read is hedged: its first answer takes 40 ms
		c.Hedge.Budget = 1
	}, sim.Config{Latency: fixed(40 * time.Millisecond)}, sim.Config{Latency: fixed(40 * time.Millisecond)})
	const n = 20
	for i := range n {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	st := h.status()
	m := st.Methods["eth_getBalance"]
	sent := m.Primary + m.AccountSnapshot.Hedge + m.Failover
	if m.Client.Requests != n || m.Client.HedgesFired != m.HedgesFired || m.Client.HedgesWon != m.HedgesWon || m.Client.Upstream != sent {
		t.Fatalf("first minute: the minute's %d requests, %d hedges fired, %d won, %d attempts upstream; since start %d, %d, %d, %d: they must be the same",
			m.Client.Requests, m.Client.HedgesFired, m.Client.HedgesWon, m.Client.Upstream, m.Requests, m.HedgesFired, m.HedgesWon, sent)
	}
	if m.HedgesFired < n/2 || m.Client.FireRate != m.FireRate || m.Client.Amplification != m.Amplification || m.Client.WinRate != m.WinRate {
		t.Fatalf("first minute: fire %.3f, win %.3f, amplification %.3f; since start %.3f, %.3f, %.3f (%d hedges of %d reads hedged at 5ms)",
			m.Client.FireRate, m.Client.WinRate, m.Client.Amplification, m.FireRate, m.WinRate, m.Amplification, m.HedgesFired, n)
	}
	if st.Client.HedgesFired != st.Totals.HedgesFired || st.Client.Upstream != st.Totals.Primary+st.Totals.Hedge+st.Totals.Failover {
		t.Fatalf("the pool's minute: %d hedges, %d attempts; since start %d, %+v", st.Client.HedgesFired, st.Client.Upstream, st.Totals.HedgesFired, st.Totals)
	}

	off := false
	if err := h.eng.SetHedge(engine.ActorAdmin, engine.HedgeUpdate{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute + time.Second)
	for i := range n {
		mustOK(t, h.call(n+i, "eth_getBalance", addr, "latest"))
	}
	st = h.status()
	m = st.Methods["eth_getBalance"]
	if m.Client.Requests != n || m.Client.HedgesFired != 0 || m.Client.FireRate != 0 || m.Client.Upstream != n || m.Client.Amplification != 1 {
		t.Errorf("a minute after hedging went off: %d requests, %d hedges (fire %.3f), %d attempts upstream (amplification %.3f); want %d, none, %d (1)",
			m.Client.Requests, m.Client.HedgesFired, m.Client.FireRate, m.Client.Upstream, m.Client.Amplification, n, n)
	}
	if m.FireRate <= 0 || st.Client.FireRate != 0 || st.Client.Amplification != 1 {
		t.Errorf("since start fire %.3f (want the first minute's hedges still counted), the pool's minute fire %.3f amplification %.3f (want 0, 1)",
			m.FireRate, st.Client.FireRate, st.Client.Amplification)
	}
}
