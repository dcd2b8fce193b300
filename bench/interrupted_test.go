package bench_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

// A run stopped in its second row (Ctrl-C) still reports the row that ran
// whole: a long run lost every figure it had measured.
func TestCompare_AnInterruptedRunReportsTheRowsThatRan(t *testing.T) {
	c, err := compareStoppedInRow(t, 2)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted during row immediate (1 of 2 rows ran)") {
		t.Fatalf("error %v, want the interruption named", err)
	}
	if c == nil || len(c.Rows) != 1 || c.Rows[0].Policy != "off" || c.Rows[0].Calls.N != 100 || c.Interrupted != "immediate" {
		t.Fatalf("report %+v: want the off row's 100 calls, interrupted in immediate", c)
	}
	var table bytes.Buffer
	if err := c.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "interrupted during row immediate") {
		t.Errorf("the table does not say the run was interrupted:\n%s", table.String())
	}
}

// Stopped in its first row, a run says it was interrupted, not that the
// row failed ("bench: row off: context canceled").
func TestCompare_ARunStoppedInItsFirstRowSaysItWasInterrupted(t *testing.T) {
	c, err := compareStoppedInRow(t, 1)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "bench: interrupted during row off (0 of 2 rows ran)") {
		t.Fatalf("error %v, want the interruption named", err)
	}
	if c != nil {
		t.Errorf("report %+v, want none: no row ran whole", c)
	}
}

// compareStoppedInRow runs the rows off and immediate over quick sims,
// stopping the run (Ctrl-C) as the engine of row n (from 1) starts.
func compareStoppedInRow(t *testing.T, n int32) (*bench.Comparison, error) {
	t.Helper()
	policies, err := bench.ParsePolicies("off,immediate", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var started atomic.Int32
	start := func(spec bench.EngineSpec) (bench.Engine, error) {
		eng, err := startEngine(spec)
		if started.Add(1) == n {
			cancel()
		}
		return eng, err
	}
	return bench.Compare(ctx, bench.CompareConfig{
		Workload: bench.Workload{Mix: bench.Mix{{Method: "eth_getBalance", Weight: 1}}, Rate: 100, Duration: time.Second, Warmup: 200 * time.Millisecond, Seed: 1},
		Scenario: quickScenario(2),
		Policies: policies,
		Start:    start,
	})
}
