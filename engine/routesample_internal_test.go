package engine

import (
	"testing"
	"time"
)

// A hedge's or a failover's answers show in the endpoint's latency but not
// in what the router weighs it by: they are sent when another endpoint is
// slow, which is when endpoints slow together are slow too.
func TestRouter_OnlyTheAttemptsAnEndpointWasChosenForSetItsRoutingFigure(t *testing.T) {
	const method = "eth_getBalance"
	e, _ := clockedEngine(t, 2, nil)
	ep := e.endpoints[0]
	for range 60 {
		e.learnLatency(&attempt{ep: ep, role: rolePrimary, stats: ep.stats(method)}, 20*time.Millisecond)
		e.learnLatency(&attempt{ep: ep, role: roleHedge, stats: ep.stats(method)}, 600*time.Millisecond)
		e.learnLatency(&attempt{ep: ep, role: roleFailover, stats: ep.stats(method)}, 600*time.Millisecond)
	}
	fig, ok := ep.routeLatency(method)
	if !ok || fig.lat > 25 {
		t.Fatalf("60 primaries at 20 ms beside 120 hedges and failovers at 600 ms: routing figure %+v (%v), want the primaries' 20 ms", fig, ok)
	}
	if high, _ := fig.takeTail(20); fig.tail > 0 || high > 0.1 {
		t.Fatalf("tail share %.3f (upper %.3f), want none: the primaries have no tail", fig.tail, high)
	}
	if n := ep.latency.Count(); n != 180 {
		t.Fatalf("the endpoint's latency window holds %d answers, want all 180 (shown, and the deadlines')", n)
	}
	// An exploring hedge is sent at once, whatever the others do: a sample.
	for range 60 {
		e.learnLatency(&attempt{ep: ep, role: roleHedge, explore: true, stats: ep.stats(method)}, 300*time.Millisecond)
	}
	if fig, _ := ep.routeLatency(method); fig.lat < 100 {
		t.Fatalf("60 exploring hedges at 300 ms beside 60 primaries at 20 ms: routing figure %+v, want them counted", fig)
	}
}

func TestConcurrencyLeader(t *testing.T) {
	for _, tc := range []struct {
		lats []float64
		want int
	}{
		{[]float64{20, 60, 100}, 0},
		{[]float64{60, 20, 100}, 1},
		{[]float64{20, 39, 100}, -1}, // not twice as quick as the second
		{[]float64{20, 40}, 0},
		{[]float64{90, 92, 95}, -1},
		{[]float64{20, -1, 60}, 0}, // the unmeasured left out
		{[]float64{20}, -1},        // no other to be quicker than
		{[]float64{-1, -1}, -1},
		{nil, -1},
	} {
		if got := concurrencyLeader(tc.lats); got != tc.want {
			t.Errorf("concurrencyLeader(%v) = %d, want %d", tc.lats, got, tc.want)
		}
	}
}
