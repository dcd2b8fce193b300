package engine

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests that spend seconds of real time waiting on latencies call
// t.Parallel: they leave the cores mostly idle, and run one after another
// they made this package most of the suite's time. A test that changes
// package state (SetQueueBaseSpan, t.Setenv) must not: it runs alone,
// before the parallel ones start.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
