package engine

import (
	"testing"
	"time"
)

// An endpoint whose window the aftermath emptied routes at the pace it had
// before the slowdown until it holds minRouteSamples answers again; then
// at its own. (Unmeasured, it took the pool's best figure, which may be an
// endpoint still slow.)
func TestAftermath_AnEmptiedWindowRoutesAtThePriorPaceUntilMeasured(t *testing.T) {
	e, _ := clockedEngine(t, 2, nil)
	a := e.endpoints[0]
	if _, ok := a.routeLatency("eth_getBalance"); ok {
		t.Fatal("measured with no answers")
	}
	a.priorPace.Store(int64(20 * time.Millisecond))
	fig, ok := a.routeLatency("eth_getBalance")
	if !ok || fig.lat != 20 || fig.source != scoreFromEndpoint || fig.window != nil {
		t.Fatalf("emptied, with a prior pace of 20 ms: %+v, %v; want 20 ms from the endpoint, no tail window", fig, ok)
	}
	for range minRouteSamples {
		a.latency.Record(35 * time.Millisecond)
	}
	fig, ok = a.routeLatency("eth_getBalance")
	if !ok || fig.lat < 30 || fig.window == nil || a.priorPace.Load() != 0 {
		t.Fatalf("with %d answers of 35 ms: %+v, prior %v; want its own figure, the prior dropped", minRouteSamples, fig, a.priorPace.Load())
	}
}
