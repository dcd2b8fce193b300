package engine

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests that spend seconds of real time waiting on latencies call
// t.Parallel: they leave the cores mostly idle (under a third of a core
// each), and run one after another they made this package most of the
// suite's time. Two must not: a test that keeps a core busy (a load at
// full speed, a Monte Carlo), which would stretch the timings of the
// others beside it, and one that changes package state (SetQueueBaseSpan,
// t.Setenv). Those run alone, before the parallel ones start.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
