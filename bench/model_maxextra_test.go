package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// --max-extra 3 runs the built-in sims' engines with hedge.max_extra 3; the
// model columns must forecast those three duplicates, not a fresh engine's
// one (the model read hedge.max_extra from the defaults whatever the flag),
// and the report's model line says so (it said "one duplicate").
func TestCompare_ModelHedgesAsManyDuplicatesAsTheRows(t *testing.T) {
	const maxExtra = 3
	sc := sim.Scenario{Endpoints: 4, Seed: 3, Latency: sim.Latency{Median: 5 * time.Millisecond, Sigma: 0.5}}
	mix, _ := bench.ParseMix("eth_getBalance")
	policies, _ := bench.ParsePolicies("direct,immediate", "", "")
	c, err := bench.Compare(context.Background(), bench.CompareConfig{
		Workload: bench.Workload{Mix: mix, Rate: 200, Count: 200, Seed: 3},
		Scenario: sc, Policies: policies, MaxExtra: maxExtra, Start: startEngine})
	if err != nil {
		t.Fatal(err)
	}
	direct, immediate := c.Rows[0], c.Rows[1]
	if c.Baseline != direct.Policy || immediate.ModelP99MS == nil {
		t.Fatalf("baseline %q, immediate's model %v", c.Baseline, immediate.ModelP99MS)
	}
	def := engine.Default()
	in := engine.ForecastInput{Primary: engine.DistributionOf(bench.Baseline(direct), nil), MaxExtra: maxExtra, Budget: 1, Burst: def.Hedge.BudgetBurst}
	want := engine.Forecast(in)
	in.MaxExtra = 1
	one := engine.Forecast(in)
	if want.P99 == one.P99 {
		t.Fatalf("the baseline cannot tell 3 duplicates from 1 (p99 %s): pick another scenario", want.P99)
	}
	var head strings.Builder
	c.WriteTable(&head)
	if c.ModelMaxExtra != maxExtra || !strings.Contains(head.String(), "model:    p99 of up to 3 duplicates a delay apart") {
		t.Errorf("model_max_extra %d, report:\n%s\nwant it to say the model's 3 duplicates", c.ModelMaxExtra, head.String())
	}
	if got := *immediate.ModelP99MS; got != float64(want.P99)/float64(time.Millisecond) {
		t.Errorf("immediate's model p99 %.3f ms, want %.3f ms (%d duplicates; with one: %.3f ms)", got,
			float64(want.P99)/float64(time.Millisecond), maxExtra, float64(one.P99)/float64(time.Millisecond))
	}
}
