package bench_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/rpcdash/rpcdash/internal/benchengine"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startEngine is the EngineStarter main hands bench.
var startEngine = benchengine.Start
