package bench_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/sim"
)

// BenchmarkTailScenario is the seeds' full table on the default tail
// scenario (three independent endpoints, median 50 ms, σ 0.3, 2 % tails of
// 500–1000 ms): every default row, 100 op/s for 30 s after a 3 s warm-up,
// about 4 minutes. It runs once whatever b.N is and reports the table and
// custom metrics. `rpcdash bench` with no flags runs the same. Run it with
//
//	go test -run XXX -bench TailScenario -benchtime 1x ./bench/
func BenchmarkTailScenario(b *testing.B) {
	mix, _ := bench.ParseMix("eth_getBalance")
	policies, _ := bench.ParsePolicies("direct,off,immediate", "100ms", "0.9,0.95,0.99")
	c, err := bench.Compare(context.Background(), bench.CompareConfig{
		Workload: bench.Workload{Mix: mix, Rate: 100, Duration: 30 * time.Second, Warmup: 3 * time.Second, Seed: 1},
		Scenario: sim.TailScenario(),
		Policies: policies,
		Start:    startEngine,
	})
	if err != nil {
		b.Fatal(err)
	}
	// Straight to stdout: the testing package cuts long benchmark logs.
	c.WriteTable(os.Stdout)
	for _, r := range c.Rows {
		b.ReportMetric(r.Calls.P99, strings.ReplaceAll(r.Policy, " ", "_")+"-p99-ms")
	}
}
