package bench_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/sim"
)

// quickScenario: 10 ms upstreams with a 3 % tail of 100–200 ms. The tail
// is below 5 % by a margin, so an auto p95 delay sits in the body even on a
// loaded machine, and the unhedged p99 sits in the tail: the direct row's
// 450 calls draw from one sim reseeded with seed 1001, a fixed sequence
// with more than the 5 tail answers that put the p99 in the tail.
func quickScenario(endpoints int) sim.Scenario {
	return sim.Scenario{Endpoints: endpoints, Seed: 1, Latency: sim.Latency{Median: 10 * time.Millisecond, Sigma: 0.3,
		TailProb: 0.03, TailMin: 100 * time.Millisecond, TailMax: 200 * time.Millisecond}}
}

// Every kind of row in one run against one engine: the policies are
// switched through the admin API, immediate duplication really sends the
// duplicate at once with the budget lifted, and the model column sits
// beside each delay row.
func TestCompare_EveryPolicyKindSideBySide(t *testing.T) {
	mix, _ := bench.ParseMix("eth_getBalance=3,eth_call=1")
	policies, err := bench.ParsePolicies("direct,off,immediate", "30ms", "0.95")
	if err != nil {
		t.Fatal(err)
	}
	c, err := bench.Compare(context.Background(), bench.CompareConfig{
		Workload: bench.Workload{Mix: mix, Rate: 150, Duration: 3 * time.Second, Warmup: 500 * time.Millisecond, Seed: 1},
		Scenario: quickScenario(3),
		Policies: policies,
		Start:    startEngine,
	})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := c.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())

	if len(c.Rows) != 5 || c.Baseline != "direct" {
		t.Fatalf("%d rows, baseline %q", len(c.Rows), c.Baseline)
	}
	for _, r := range c.Rows {
		if r.Calls.N != 450 || r.OK != 450 {
			t.Errorf("%s: %d calls, %d ok; want 450 answered", r.Policy, r.Calls.N, r.OK)
		}
	}
	direct, off, immediate, fixed, auto := c.Rows[0], c.Rows[1], c.Rows[2], c.Rows[3], c.Rows[4]
	if direct.Upstream != 450 || direct.Amplification != 1 || direct.DelayMS != nil || direct.Failovers != nil || direct.Wasted == nil || direct.Wasted.Cancelled != 0 || direct.Wasted.Source != "upstreams" {
		t.Errorf("direct: %+v", direct)
	}
	// Hedging off sends no hedge. An attempt past its deadline still has
	// the next endpoint raced beside it (Envoy's hedge_on_per_try_timeout),
	// and a failed one is retried elsewhere: a 10 ms read passes its 250 ms
	// deadline on a loaded machine (501 upstream requests for 450 calls at
	// a load average of 12–17). How many depends on the machine; that
	// every request beyond one per call is such a failover, by the
	// instance's own count over the row, does not. (The upstream count is
	// the answers' X-Rpcdash-Attempts, exact when every call was answered,
	// as checked above; for a call with no answer it is the instance's
	// count, which holds warm-up calls' attempts too.) The upstreams waste
	// work only where a race left a loser.
	if off.Failovers != nil && off.Wasted != nil {
		t.Logf("off: upstream %d for 450 calls, %d failovers, %d cancelled at the sims", off.Upstream, *off.Failovers, off.Wasted.Cancelled)
	}
	if off.HedgedShare != 0 || off.Failovers == nil || off.OK == 450 && off.Upstream-450 > *off.Failovers || off.Wasted == nil ||
		*off.Failovers == 0 && off.Wasted.Cancelled != 0 || off.ModelP99MS != nil {
		t.Errorf("off: hedged %v, upstream %d for 450 calls, failovers %v, wasted %+v", off.HedgedShare, off.Upstream, off.Failovers, off.Wasted)
	}
	// A real zero delay with the budget lifted: every read is duplicated
	// at once, or its hedge was held back by a guard (the queue guard, the
	// saturation guard, rpcdash stalled: on a loaded machine the sims slow
	// down and queue, and 18 % to 80 % of the reads were held), and the row
	// says which; none for the budget. The losers' work shows as waste: how
	// many are still running when the winner answers (cancelled at the
	// sims, rather than finished) depends on how busy the machine is.
	held := immediate.HedgesRefused["late"] + immediate.HedgesRefused["queue"] + immediate.HedgesRefused["paused"]
	if immediate.DelayMS == nil || *immediate.DelayMS != 0 || immediate.HedgesRefused["budget"] != 0 ||
		immediate.HedgedShare+float64(held)/450 < 0.9 || immediate.Amplification < 1+immediate.HedgedShare-0.02 ||
		immediate.Wasted == nil || immediate.Wasted.Seconds <= 0 || immediate.HedgedShare >= 0.1 && immediate.Wasted.Cancelled == 0 {
		t.Errorf("immediate: delay %v, hedged %v, refused %v, amplification %v, wasted %+v", immediate.DelayMS, immediate.HedgedShare,
			immediate.HedgesRefused, immediate.Amplification, immediate.Wasted)
	}
	if warned := slices.ContainsFunc(immediate.Warnings, func(w string) bool { return strings.HasPrefix(w, "hedges held back: of 450 calls") }); warned != (held > 0) {
		t.Errorf("immediate: %d held back, warnings %q", held, immediate.Warnings)
	}
	// The budget (10 % plus a burst of 10) bounds the delayed rows. They
	// hedge, unless a guard held every due hedge back (on a loaded machine
	// the saturation guard paused hedging for the fixed row's 30 ms delay:
	// "paused 254"), which the row then says.
	for _, r := range []bench.Row{fixed, auto} {
		held := r.HedgesRefused["late"] + r.HedgesRefused["queue"] + r.HedgesRefused["paused"]
		if limit := 0.10 + 10.0/450 + 0.02; r.HedgedShare > limit || r.HedgedShare == 0 && held == 0 {
			t.Errorf("%s: hedged share %.3f, want within (0, %.3f] (held back %v)", r.Policy, r.HedgedShare, limit, r.HedgesRefused)
		}
		if warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "hedges held back: of 450 calls") }); warned != (held > 0) {
			t.Errorf("%s: %d held back, warnings %q", r.Policy, held, r.Warnings)
		}
		if r.DelayMS == nil || r.ModelP99MS == nil {
			t.Errorf("%s: delay %v, model %v", r.Policy, r.DelayMS, r.ModelP99MS)
		}
	}
	if fixed.DelayMS == nil || *fixed.DelayMS != 30 || auto.DelayMS == nil || auto.DelayMaxMS < auto.DelayMinMS || *auto.DelayMS <= 0 {
		t.Fatalf("delays: fixed %v, auto %v (%v–%v)", fixed.DelayMS, auto.DelayMS, auto.DelayMinMS, auto.DelayMaxMS)
	}
	// The unhedged p99 sits in the 100–200 ms tail (or above: a loaded
	// machine only adds). By the model, duplicating every call at once
	// (the budget lifted) makes the p99 the faster of two draws', the
	// baseline's p90 (S(t)² = 1 %): at most its p95, below its p99. Where
	// that lands, tail or body, depends on the machine as well as on the
	// sims: a loaded machine gave the direct row of 10 ms sims a p50 of
	// 90.3 ms, p95 520.5, p99 573.9, and the model at 0 ms 450.6. (What
	// the run itself shows is bench's figures' business, not a unit
	// test's.)
	if immediate.ModelP99MS == nil || direct.Calls.P99 < 100 || *immediate.ModelP99MS > direct.Calls.P95 || *immediate.ModelP99MS >= direct.Calls.P99 {
		t.Errorf("p99: direct p95 %.1f p99 %.1f, model at 0 ms %v", direct.Calls.P95, direct.Calls.P99, deref(immediate.ModelP99MS))
	}

	// The same comparison in every format.
	for _, f := range bench.Formats {
		var b bytes.Buffer
		if err := c.Write(&b, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out := b.String()
		switch f {
		case "table", "markdown":
			for _, want := range []string{"direct", "off", "immediate", "fixed 30ms", "auto p95", "seed 1", "model p99"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s lacks %q:\n%s", f, want, out)
				}
			}
		case "csv":
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil || len(recs) != 6 || recs[0][0] != "policy" || recs[3][0] != "immediate" || recs[3][2] != "0" {
				t.Errorf("csv: %v\n%s", err, out)
			}
		case "json":
			var back bench.Comparison
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Rows) != 5 || back.Workload.Seed != 1 || back.Rows[2].Amplification != immediate.Amplification {
				t.Errorf("json: %v\n%s", err, out)
			}
		}
	}
}

// The control tenant shares the endpoints' capacity: when duplicates push
// the offered load past it, the load check flags the row and the control
// tenant, never hedged, pays for it. Operations of two calls complete at
// the first answer.
func TestCompare_ControlTenantFanoutAndLoadCheck(t *testing.T) {
	sc := sim.Scenario{Endpoints: 2, Seed: 2, Capacity: 170, Latency: sim.Latency{Median: 5 * time.Millisecond, Sigma: 0.2}}
	mix, _ := bench.ParseMix("eth_getBalance")
	policies, _ := bench.ParsePolicies("off,immediate", "", "")
	c, err := bench.Compare(context.Background(), bench.CompareConfig{
		Workload: bench.Workload{Mix: mix, Rate: 100, Duration: 2 * time.Second, Warmup: 300 * time.Millisecond, Seed: 2,
			ControlShare: 0.25, Fanout: bench.Fanout{K: 2, Q: 1}},
		Scenario: sc,
		Policies: policies,
		Deadline: 50 * time.Millisecond,
		Start:    startEngine,
	})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	c.WriteTable(&table)
	t.Logf("\n%s", table.String())
	off, immediate := c.Rows[0], c.Rows[1]
	for _, r := range c.Rows {
		if r.Control == nil || r.Control.Calls.N < 50 || r.Operations == nil || r.Operations.K != 2 || r.Operations.Q != 1 ||
			r.Operations.Ops.N*2 != r.Calls.N || r.DeadlineMisses == nil || r.Load == nil || r.MaxLoad == nil {
			t.Fatalf("%s: %+v", r.Policy, r)
		}
		// (1+h)·ρ: the row's upstream requests and the control tenant's
		// calls per second, over two endpoints of 170.
		if want := float64(r.Upstream+int64(r.Control.Calls.N)) / 2 / (2 * 170); math.Abs(*r.Load-want) > 1e-9 || r.Overload != (want >= 1) {
			t.Errorf("%s: load %v (overload %v), want %v", r.Policy, *r.Load, r.Overload, want)
		}
		// The busiest endpoint carries at least its half of the pool.
		if *r.MaxLoad < *r.Load-0.05 {
			t.Errorf("%s: busiest endpoint %v below the pool's %v", r.Policy, *r.MaxLoad, *r.Load)
		}
		// Each operation completes at the faster of its two calls, so by rank
		// the operations' median is at most the calls' (when every call
		// answered: an error leaves an operation its slower call).
		if errs := r.RPCErrors + r.Transport + r.Incomplete; errs == 0 && r.Operations.Ops.P50 > r.Calls.P50 {
			t.Errorf("%s: the first of two answers (p50 %v) is slower than one call (p50 %v)", r.Policy, r.Operations.Ops.P50, r.Calls.P50)
		}
	}
	// Main 150 calls/s + control 50 over 340: duplicates push the pool's
	// load from about 0.59 towards 1. (What the control tenant pays for
	// them is the figures' business: a measurement, not a unit test's.)
	if *off.Load >= 0.7 || off.Overload || *immediate.Load <= *off.Load {
		t.Errorf("load: off %.2f %v, immediate %.2f %v", *off.Load, off.Overload, *immediate.Load, immediate.Overload)
	}
	for _, want := range []string{"ctl p99", "op p99", "load (1+h)ρ", "busiest"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

func TestCompare_RefusesIncompleteConfig(t *testing.T) {
	mix, _ := bench.ParseMix("eth_call")
	w := bench.Workload{Mix: mix, Rate: 10, Duration: time.Second}
	policies, _ := bench.ParsePolicies("off", "", "")
	direct, _ := bench.ParsePolicies("direct", "", "")
	for name, cfg := range map[string]bench.CompareConfig{
		"no starter":              {Workload: w, Scenario: sim.TailScenario(), Policies: policies},
		"no policies":             {Workload: w, Scenario: sim.TailScenario(), Start: startEngine},
		"admin without target":    {Workload: w, Scenario: sim.TailScenario(), Policies: policies, Start: startEngine, Target: bench.Target{Admin: bench.Admin{URL: "http://127.0.0.1:1"}}},
		"direct with admin":       {Workload: w, Policies: direct, Target: bench.Target{URL: "http://127.0.0.1:1", Admin: bench.Admin{URL: "http://127.0.0.1:2"}}},
		"control without a place": {Workload: bench.Workload{Mix: mix, Rate: 10, Duration: time.Second, ControlShare: 0.1}, Target: bench.Target{URL: "http://127.0.0.1:1"}},
		"bad scenario":            {Workload: w, Scenario: sim.Scenario{}, Policies: policies, Start: startEngine},
		"bad workload":            {Workload: bench.Workload{Rate: 10, Duration: time.Second}, Scenario: sim.TailScenario(), Policies: policies, Start: startEngine},
	} {
		if _, err := bench.Compare(context.Background(), cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Independent tails on unloaded endpoints are the best case hedging meets:
// the report says so, and stops saying it once incidents are shared.
func TestDescribe_NotesTheOptimisticCase(t *testing.T) {
	note := "the optimistic case for hedging"
	has := func(cfg bench.CompareConfig) bool {
		return slices.ContainsFunc(bench.Describe(cfg).Workload.Notes, func(n string) bool { return strings.Contains(n, note) })
	}
	cfg := bench.CompareConfig{Scenario: sim.TailScenario()}
	if !has(cfg) {
		t.Errorf("independent tails, no capacity: notes %q lack %q", bench.Describe(cfg).Workload.Notes, note)
	}
	cfg.Scenario.Latency.Correlated = 0.5
	if has(cfg) {
		t.Error("shared incidents still called the optimistic case")
	}
	// The model assumes independence: with shared incidents its p99 is
	// optimistic, and the report says so.
	if notes := bench.Describe(cfg).Workload.Notes; !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "its p99 is optimistic") }) {
		t.Errorf("shared incidents: notes %q do not say the model's p99 is optimistic", notes)
	}
	cfg.Scenario.Latency.Correlated, cfg.Scenario.Capacity = 0, 100
	if has(cfg) {
		t.Error("capacity-limited endpoints still called the optimistic case")
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
