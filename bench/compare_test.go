package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/sim"
)

// checkSanity asserts what any comparison must show: every planned request
// sent and answered without error, no hedges when hedging is off, and
// hedged amplification within the budget plus the bucket's burst.
func checkSanity(t testing.TB, c *bench.Comparison, policies []bench.Policy) {
	t.Helper()
	const burst = 10 // the engine's default hedge.budget_burst
	for i, r := range c.Runs {
		if r.Requests != r.Planned || r.Errors != 0 || r.Incomplete != 0 || r.OK != r.Requests {
			t.Errorf("%s: %d planned, %d sent, %d ok, %d errors, %d incomplete", r.Policy, r.Planned, r.Requests, r.OK, r.Errors, r.Incomplete)
		}
		h := policies[i].Hedge
		if !h.Enabled {
			// Hedging off still fails over a read whose attempt passes its
			// own deadline; in these scenarios that is rare.
			if r.HedgeShare != 0 || r.Amplification > 1.10 {
				t.Errorf("%s: hedge share %v, amplification %v with hedging off", r.Policy, r.HedgeShare, r.Amplification)
			}
			continue
		}
		// The budget bounds hedges; failovers (attempt deadlines passing on a
		// loaded machine) come on top and get a little room of their own.
		if limit := h.Budget + float64(burst)/float64(r.Requests) + 0.01; r.HedgeShare > limit {
			t.Errorf("%s: hedged share %.3f above budget limit %.3f", r.Policy, r.HedgeShare, limit)
		}
		if limit := 1 + h.Budget + float64(burst)/float64(r.Requests) + 0.06; r.Amplification > limit {
			t.Errorf("%s: amplification %.3f above budget limit %.3f", r.Policy, r.Amplification, limit)
		}
		if r.HedgeDelayMS <= 0 {
			t.Errorf("%s: no hedge delay read from /v1/status", r.Policy)
		}
	}
}

// A small version of issue 3's comparison for the default suite: 10 ms
// upstreams with a 3 % tail, 200 req/s for 3 s per policy. The tail is
// below 5 % by a margin, so the p95 delay sits in the body even when a
// loaded machine stretches it (at 4 % the estimate could climb onto the
// tail, and the model's p99 with it); 600 requests hold 18 tail answers on
// average, and fewer than the 7 that put the p99 in the tail about once in
// 1000 runs.
func TestCompare_QuickOffVersusAuto(t *testing.T) {
	lat := sim.Latency{Median: 10 * time.Millisecond, Sigma: 0.3, TailProb: 0.03, TailMin: 100 * time.Millisecond, TailMax: 200 * time.Millisecond}
	ups := []sim.Config{{Latency: lat}, {Latency: lat}, {Latency: lat}}
	policies, _ := bench.ParsePolicies("direct,off,auto")
	var progress bytes.Buffer
	c, err := bench.Compare(context.Background(), bench.CompareConfig{
		Upstreams: ups,
		Policies:  policies,
		Load:      bench.Load{Method: "eth_getBalance", Params: bench.DefaultParams("eth_getBalance"), Rate: 200, Duration: 3 * time.Second},
		Warmup:    500 * time.Millisecond,
		Start:     startEngine,
		Progress:  &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	c.WriteTable(&table)
	t.Logf("\n%s", table.String())

	checkSanity(t, c, policies)
	if len(c.Runs) != 3 || c.Runs[0].Requests != 600 {
		t.Fatalf("runs %+v", c.Runs)
	}
	if got := strings.Count(progress.String(), "running "); got != 3 {
		t.Errorf("%d progress lines", got)
	}
	direct, off, auto := c.Runs[0], c.Runs[1], c.Runs[2]
	if direct.Engine != nil || off.Engine == nil || auto.Engine == nil || off.Engine.Primary != 600 || off.Engine.Hedge != 0 {
		t.Errorf("engine counts: direct %+v, off %+v, auto %+v", direct.Engine, off.Engine, auto.Engine)
	}
	// A warm-up request still in flight when the measured run starts can add
	// a hedge or failover to the engine's count but not to the headers.
	if want := auto.Engine.Primary + auto.Engine.Hedge + auto.Engine.Failover; auto.Attempts > want || want-auto.Attempts > 3 {
		t.Errorf("X-Rpcdash-Attempts sum %d, engine's own count %d", auto.Attempts, want)
	}
	if len(c.Predictions) != 2 || c.Predictions[0].Label != "model(direct)@auto p95" || c.Predictions[1].Label != "model@auto p95" ||
		c.Predictions[0].DelayMS != auto.HedgeDelayMS || auto.DelaySource != "auto" {
		t.Fatalf("predictions %+v for run %+v", c.Predictions, auto)
	}
	// The unhedged p99 sits in the 100–200 ms tail; one hedge at about the
	// p95 should, by the model, bring it close to the body.
	for i, base := range []bench.Report{direct, off} {
		if model := c.Predictions[i].P99; base.P99 < 100 || model >= base.P99/2 {
			t.Errorf("%s: unhedged p99 %.1f ms, model p99 %.1f ms", base.Policy, base.P99, model)
		}
	}
	var js bytes.Buffer
	if err := c.WriteJSON(&js); err != nil || !json.Valid(js.Bytes()) {
		t.Fatalf("JSON: %v %s", err, js.String())
	}
}

func TestCompare_RefusesIncompleteConfig(t *testing.T) {
	policies, _ := bench.ParsePolicies("off")
	for _, cfg := range []bench.CompareConfig{
		{Upstreams: bench.TailScenario(), Policies: policies},
		{Policies: policies, Start: startEngine},
		{Upstreams: bench.TailScenario(), Start: startEngine},
	} {
		if _, err := bench.Compare(context.Background(), cfg); err == nil {
			t.Errorf("accepted %+v", cfg)
		}
	}
}
