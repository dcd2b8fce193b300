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

// A slowdown a sub-window or more after the last one the aftermath still
// holds (kept on by an endpoint that has not answered since) starts an
// aftermath of its own: its first excused deadline is where forgetting
// begins, not the old slowdown's minutes before.
func TestAftermath_ASlowdownLongAfterTheLastStartsItsOwn(t *testing.T) {
	e, clock := clockedEngine(t, 2, nil)
	for _, ep := range e.endpoints {
		for range 50 {
			ep.latency.Record(20 * time.Millisecond)
		}
	}
	first := func() time.Time {
		e.after.mu.Lock()
		defer e.after.mu.Unlock()
		return e.after.first
	}
	t0 := clock.Now()
	e.after.noted(e, t0)
	clock.Advance(30 * time.Second)
	e.after.noted(e, clock.Now())
	if !first().Equal(t0) {
		t.Fatalf("a slowdown 30 s on began its own aftermath at %v; want the one of %v still", first(), t0)
	}
	sub := e.cfg.Server.StatsWindow / 5
	clock.Advance(sub)
	e.after.noted(e, clock.Now())
	if !first().Equal(clock.Now()) {
		t.Fatalf("a slowdown %v after the last one's latest deadline forgets from %v; want from its own start %v", sub, first(), clock.Now())
	}
}
