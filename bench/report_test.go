package bench_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

func sampleComparison() *bench.Comparison {
	zero, fixed, model, load, over := 0.0, 100.0, 140.2, 0.71, 1.05
	return &bench.Comparison{
		Target:   "built-in sims: 3 endpoints, seed 1",
		Workload: bench.WorkloadInfo{Mix: "eth_getBalance=1", Arrivals: "uniform", Rate: 100, Measured: "30s", Warmup: "3s", Seed: 1, Fanout: "none", Timeout: "10s"},
		Baseline: "direct",
		Rows: []bench.Row{
			{Policy: "direct", Kind: bench.KindDirect, Calls: bench.Figures{N: 3000, P50: 50.1, P95: 87.9, P99: 742.3, P999: 990.2, Max: 1001, Thin: []string{"p99.9"}},
				Upstream: 3000, Amplification: 1, Wasted: &bench.Wasted{}, Load: &load},
			{Policy: "immediate", Kind: bench.KindImmediate, DelayMS: &zero, Calls: bench.Figures{N: 3000, P50: 41, P99: 88.5, Max: 500},
				Upstream: 6000, Amplification: 2, HedgedShare: 1, Wasted: &bench.Wasted{Cancelled: 2990, Seconds: 120.5, Source: "upstreams"}, ModelP99MS: &model, Load: &over, Overload: true,
				Warnings: []string{"load (1+h)·ρ = 1.05 ≥ 1"}},
			{Policy: "fixed 100ms", Kind: bench.KindFixed, DelayMS: &fixed, Calls: bench.Figures{N: 3000, P99: 140.7}, RPCErrors: 2, Transport: 1, Incomplete: 3, Share429: 0.0125},
		},
	}
}

func TestWriteTable_PoliciesAsRowsInTwoAlignedBlocks(t *testing.T) {
	var b bytes.Buffer
	if err := sampleComparison().WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	blocks := strings.Split(strings.TrimSuffix(out, "\n"), "\n\n")
	if len(blocks) != 4 { // head, latency, failures and cost, warnings
		t.Fatalf("%d blocks:\n%s", len(blocks), out)
	}
	for _, block := range blocks[1:3] {
		lines := strings.Split(block, "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "policy") || !strings.HasPrefix(lines[2], "immediate") {
			t.Fatalf("block:\n%s", block)
		}
		for _, l := range lines {
			if len([]rune(l)) != len([]rune(lines[0])) {
				t.Fatalf("ragged block:\n%s", block)
			}
		}
	}
	for _, want := range []string{"seed 1", "~990.2", "742.3", "140.2", "2990 / 120.50s", "1.05 !", "0.71", "1.25%", "2.000",
		"warning: immediate: load (1+h)·ρ = 1.05", "model:    p99 of one duplicate"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	var p99 []string
	for _, l := range strings.Split(blocks[1], "\n") {
		if strings.HasPrefix(l, "immediate") {
			p99 = strings.Fields(l)
		}
	}
	// policy, delay, n, p50, p95, p99, p99.9, max, model p99
	if strings.Join(p99, " ") != "immediate 0.0 3000 41.0 0.0 88.5 0.0 500.0 140.2" {
		t.Errorf("immediate row %q", p99)
	}
}

func TestWriteMarkdownAndCSV(t *testing.T) {
	c := sampleComparison()
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| policy | delay ms | n |") || !strings.Contains(md.String(), "| --- | ---: |") ||
		!strings.Contains(md.String(), "| immediate | 0.0 | 3000 |") || !strings.Contains(md.String(), "> warning: immediate:") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var cs bytes.Buffer
	if err := c.WriteCSV(&cs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("csv: %v %v", err, recs)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	imm := recs[2]
	if imm[col["delay_ms"]] != "0" || imm[col["wasted_cancelled"]] != "2990" || imm[col["overload"]] != "true" || imm[col["model_p99_ms"]] != "140.2" ||
		recs[1][col["thin"]] != "p99.9" || recs[3][col["share_429"]] != "0.0125" || recs[3][col["wasted_cancelled"]] != "" {
		t.Errorf("csv rows %v", recs)
	}
	if err := c.Write(&bytes.Buffer{}, "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
}

// The model reads a clean unhedged row: not one whose calls failed or whose
// endpoints queued (their answers are not one attempt's service time).
func TestModel_BaselineIsACleanUnhedgedRow(t *testing.T) {
	lat := func(ms ...int) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, time.Duration(m)*time.Millisecond)
		}
		return out
	}
	over, delay := 1.7, 30.0
	c := &bench.Comparison{Rows: []bench.Row{
		bench.WithBaseline(bench.Row{Policy: "direct", Kind: bench.KindDirect, Calls: bench.Figures{N: 4}, OK: 3, Load: &over, Overload: true}, lat(9000, 9000, 9000)),
		// 10 ms (90 %) and 100 ms (10 %): one duplicate at 30 ms puts the
		// p99 at 40 ms (see TestModel_MatchesTwoPointDistribution).
		bench.WithBaseline(bench.Row{Policy: "off", Kind: bench.KindOff, Calls: bench.Figures{N: 10}, OK: 10}, lat(10, 10, 10, 10, 10, 10, 10, 10, 10, 100)),
		{Policy: "fixed 30ms", Kind: bench.KindFixed, DelayMS: &delay},
	}}
	c.Model()
	// 40 ms to within the engine's histogram buckets (1/128 of a value).
	if c.Baseline != "off" || c.Rows[2].ModelP99MS == nil || math.Abs(*c.Rows[2].ModelP99MS-40) > 0.4 || len(c.Warnings) != 0 {
		t.Fatalf("baseline %q, model %v, warnings %v", c.Baseline, c.Rows[2].ModelP99MS, c.Warnings)
	}
	// A tenth of the calls outlast 30 ms: they hedge, within the 10 % budget.
	if x := c.Rows[2].ModelExtraLoad; x == nil || math.Abs(*x-0.1) > 1e-9 || c.Rows[2].ModelCapped {
		t.Fatalf("model extra load %v, capped %v", x, c.Rows[2].ModelCapped)
	}
	c.Rows[1].OK = 9
	c.Rows[2].ModelP99MS = nil
	c.Model()
	if c.Baseline != "direct" || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "not the hedging model's") {
		t.Fatalf("with no clean row: baseline %q, warnings %v", c.Baseline, c.Warnings)
	}
}
