package bench_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// BenchmarkTailScenario is issue 3's full comparison: TailScenario's three
// upstreams, 100 req/s open loop for 30 s per policy after a 3 s warm-up,
// hedging off against auto p95 (budget 0.10, max_extra 1), with the model's
// prediction at the auto run's final delay from two baselines: the unhedged
// engine run and the same load sent straight to one upstream. It runs once
// whatever b.N is (about 100 s) and reports through the log and custom
// metrics; it asserts only sanity. Run it with
//
//	go test -run XXX -bench TailScenario -benchtime 1x ./bench/
func BenchmarkTailScenario(b *testing.B) {
	policies, _ := bench.ParsePolicies("direct,off,auto")
	c, err := bench.Compare(context.Background(), bench.CompareConfig{
		Upstreams: bench.TailScenario(),
		Policies:  policies,
		Load:      bench.Load{Method: "eth_getBalance", Params: bench.DefaultParams("eth_getBalance"), Rate: 100, Duration: 30 * time.Second},
		Warmup:    3 * time.Second,
		Start:     startEngine,
	})
	if err != nil {
		b.Fatal(err)
	}
	// Straight to stdout: the testing package cuts long benchmark logs.
	c.WriteTable(os.Stdout)
	checkSanity(b, c, policies)

	direct, off, auto := c.Runs[0], c.Runs[1], c.Runs[2]
	b.ReportMetric(direct.P99, "direct-p99-ms")
	b.ReportMetric(off.P99, "off-p99-ms")
	b.ReportMetric(auto.P99, "auto-p99-ms")
	if len(c.Predictions) == 2 {
		b.ReportMetric(c.Predictions[0].P99, "model-direct-p99-ms")
		b.ReportMetric(c.Predictions[1].P99, "model-off-p99-ms")
	}
	b.ReportMetric(auto.HedgeDelayMS, "delay-ms")
	b.ReportMetric(auto.Amplification, "auto-amplification")
}
