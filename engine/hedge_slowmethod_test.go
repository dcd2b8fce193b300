package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// hedgeEverything: hedging on, with a budget that never runs out, so that
// what fires is the delay's doing alone.
func hedgeEverything(c *engine.Config) {
	c.Hedge.Enabled = true
	c.Hedge.Budget = 1
	c.Hedge.BudgetBurst = 1e6
}

// While a method is learnt (fewer than hedge.min_samples), its hedges wait
// at least as long as its few answers took: before, a method answering in
// 600 ms at every endpoint was hedged at the 250 ms cold delay on each of its
// first 20 calls, twice the cost of each (the dearest calls: traces, logs)
// for hedges that could not win.
func TestHedge_ASlowMethodIsNotHedgedAtTheColdDelayWhileItIsLearnt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, hedgeEverything, sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(2 * time.Millisecond)})
	for _, s := range h.sims {
		s.SetMethodLatency("eth_call", 600*time.Millisecond)
	}
	hedged := 0
	for i := range 10 {
		r := h.call(i, "eth_call", map[string]any{"to": addr}, "latest")
		mustOK(t, r)
		if r.hedged {
			hedged++
		}
	}
	mh := h.status().Methods["eth_call"].Hedge
	if mh.DelaySource != "cold" || mh.Delay < 600*time.Millisecond {
		t.Fatalf("eth_call's hedge delay %s (%s) after 10 answers of 600 ms; want at least 600 ms while cold", mh.Delay, mh.DelaySource)
	}
	// The first has no answer to go by; after it a hedge fires only when a
	// call is slower than every one before it.
	if hedged > 5 {
		t.Fatalf("%d of 10 eth_call hedged; want the first and few others", hedged)
	}
	t.Logf("%d of 10 hedged; delay %s", hedged, mh.Delay)
}

// hedge.max_delay scales with a method's own request deadline: a long read
// answering in 400 ms is hedged at its quantile, not at the clamp meant for
// reads with the general deadline.
func TestHedge_MaxDelayScalesWithTheMethodsDeadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) {
		hedgeEverything(c)
		c.Server.RequestTimeout = time.Second
		c.Hedge.MaxDelay = 200 * time.Millisecond
		c.Hedge.MinSamples = 5
	}, sim.Config{Latency: fixed(2 * time.Millisecond)}, sim.Config{Latency: fixed(2 * time.Millisecond)})
	for _, s := range h.sims {
		s.SetMethodLatency("eth_call", 400*time.Millisecond)
		s.SetMethodLatency("eth_getLogs", 400*time.Millisecond)
	}
	// A primary rpcdash lost to its own stall is counted, not timed
	// (timedOwnStall): on a loaded machine 6 calls left eth_call with
	// fewer than hedge.min_samples timed and its delay cold (s60a-2: 250
	// ms, cold). Calls go on until each method has 5 timed, 20 at most.
	timed := func(method string) (n, untimed int64) {
		var md engine.MethodDistribution
		h.getJSON("/v1/methods/"+method+"/distribution", &md)
		return md.Primary.Samples(), md.Untimed
	}
	for i := 0; ; i++ {
		mustOK(t, h.call(i, "eth_call", map[string]any{"to": addr}, "latest"))
		mustOK(t, h.call(i, "eth_getLogs", logsFilter))
		nc, uc := timed("eth_call")
		nl, ul := timed("eth_getLogs")
		if i >= 5 && nc >= 5 && nl >= 5 {
			break
		}
		if i == 19 {
			t.Fatalf("after 20 calls each, eth_call %d primaries timed (%d untimed), eth_getLogs %d (%d untimed); want 5: the machine is too loaded to conclude", nc, uc, nl, ul)
		}
	}
	st := h.status()
	call, logs := st.Methods["eth_call"].Hedge, st.Methods["eth_getLogs"].Hedge
	if call.DelaySource != "auto" || call.Delay != 200*time.Millisecond {
		t.Fatalf("eth_call: delay %s (%s); want the 200 ms hedge.max_delay", call.Delay, call.DelaySource)
	}
	// eth_getLogs's own deadline is 60 s: its clamp is 60 × 200 ms.
	if logs.DelaySource != "auto" || logs.Delay < 400*time.Millisecond {
		t.Fatalf("eth_getLogs: delay %s (%s); want its own quantile, at least 400 ms", logs.Delay, logs.DelaySource)
	}
}
