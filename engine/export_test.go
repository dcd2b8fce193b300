package engine

import (
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// WindowDistribution is distributionOf for the external tests, which fill
// windows themselves.
func WindowDistribution(w *window.Latency) Distribution { return distributionOf(w) }

// SetQueueBaseSpan shortens how long the queue guard's bases hold, for a
// test that cannot wait 30 s; it returns the restore.
func SetQueueBaseSpan(d time.Duration) (restore func()) {
	old := queueBaseSpan
	queueBaseSpan = d
	return func() { queueBaseSpan = old }
}

// HeldAnswers is how many late answers wait out of the named endpoint's
// windows (lateanswers.go); the Snapshot counts them in, so only this tells
// held from learnt.
func (e *Engine) HeldAnswers(name string) int {
	ep, err := e.endpoint(name)
	if err != nil {
		panic(err)
	}
	return len(ep.late.latencies(nil))
}
