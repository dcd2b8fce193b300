package engine_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// statusLatency is an endpoint's latency as GET /v1/status writes it.
type statusLatency struct {
	Count       int64    `json:"count"`
	Censored    int64    `json:"censored"`
	P95         float64  `json:"p95_ms"`
	P99         float64  `json:"p99_ms"`
	LowerBounds []string `json:"lower_bounds"`
}

// An endpoint with a heavy tail (30 ms median, 5 % of answers 300–800 ms:
// a p99 near 700 ms) whose slow primaries hedges cut short showed its
// quick answers alone: p99 62 ms under hedging against 717 ms without (an
// audit), the tail dropped with the attempts that carry it. Its
// percentiles now count those attempts, and where they leave a figure
// only "at least" (the answers end before it), the status says so:
// `lower_bounds` names it, for the endpoint and for its method.
func TestStatus_HedgedEndpointsTailIsCountedOrMarkedALowerBound(t *testing.T) {
	t.Parallel()
	tailed := sim.Latency{Median: 30 * time.Millisecond, Sigma: 0.3, TailProb: 0.05, TailMin: 300 * time.Millisecond, TailMax: 800 * time.Millisecond}
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("80ms")(c)
		c.Router.TailPenalty = 0 // the tailed endpoint keeps its primaries: what is measured is how they are shown
		c.Router.ExploreAfter = time.Hour
	}, sim.Config{Latency: tailed, Seed: 7}, sim.Config{Latency: sim.Latency{Median: 45 * time.Millisecond, Sigma: 0.1}})
	h.loadBy(600, 4)

	rng := rand.New(rand.NewPCG(1, 2))
	draws := make([]time.Duration, 200000)
	for i := range draws {
		draws[i] = tailed.Sample(rng)
	}
	slices.Sort(draws)
	model := draws[len(draws)*99/100]

	code, b := h.adminDo("GET", "/v1/status", "")
	if code != 200 {
		t.Fatalf("status: HTTP %d %s", code, b)
	}
	var st struct {
		Endpoints []struct {
			Name       string        `json:"name"`
			Latency    statusLatency `json:"latency"`
			Accounting struct {
				Primary   int64 `json:"primary"`
				HedgesWon int64 `json:"hedges_won"`
			} `json:"accounting"`
			Methods map[string]struct {
				Latency statusLatency `json:"latency"`
			} `json:"methods"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	s0 := st.Endpoints[0]
	tails := h.sims[0].Counters().Tails
	t.Logf("model p99 %v; s0: %d primaries, %d tails, latency %+v; method %+v", model, s0.Accounting.Primary, tails,
		s0.Latency, s0.Methods["eth_getBalance"].Latency)
	if s0.Name != "s0" || s0.Latency.Censored < 5 || tails < 10 {
		t.Fatalf("%s: %d censored of %d tails: the hedges did not cut the tail short, nothing to show", s0.Name, s0.Latency.Censored, tails)
	}
	for what, l := range map[string]statusLatency{"endpoint": s0.Latency, "method eth_getBalance": s0.Methods["eth_getBalance"].Latency} {
		// Near the model (half its p99: the answers past the hedges are a
		// few), or a lower bound that says so.
		near := time.Duration(l.P99*float64(time.Millisecond)) >= model/2
		if !near && !slices.Contains(l.LowerBounds, "p99_ms") {
			t.Errorf("s0 %s: p99 %.1f ms, lower_bounds %q: below the tail's %v and not marked a lower bound", what, l.P99, l.LowerBounds, model)
		}
		// With every tail cut short the answers end before the censored
		// attempts, and the bound is the largest of them, past the hedge
		// delay. A tail answered beside them (its hedge refused or slower,
		// as under load) puts an answer past them: censoring then dominates
		// the curve before it, and the bound is the last answer before
		// that (README, endpoints[].latency), at least the p95.
		switch allCut := l.Censored >= tails; {
		case slices.Contains(l.LowerBounds, "p99_ms") && allCut && l.P99 < 80:
			t.Errorf("s0 %s: p99 at least %.1f ms: the attempts cut short ran past the hedge delay, 80 ms", what, l.P99)
		case slices.Contains(l.LowerBounds, "p99_ms") && !allCut && l.P99 < l.P95:
			t.Errorf("s0 %s: p99 at least %.1f ms, below its p95 %.1f ms", what, l.P99, l.P95)
		}
	}
}
