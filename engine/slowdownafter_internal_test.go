package engine

import (
	"strings"
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
	e.after.noted(e, t0, false)
	clock.Advance(30 * time.Second)
	e.after.noted(e, clock.Now(), false)
	if !first().Equal(t0) {
		t.Fatalf("a slowdown 30 s on began its own aftermath at %v; want the one of %v still", first(), t0)
	}
	sub := e.cfg.Server.StatsWindow / 5
	clock.Advance(sub)
	e.after.noted(e, clock.Now(), false)
	if !first().Equal(clock.Now()) {
		t.Fatalf("a slowdown %v after the last one's latest deadline forgets from %v; want from its own start %v", sub, first(), clock.Now())
	}
}

// A slowdown whose first excused deadline comes well after it began (20 s
// in, the figures already at the slowdown's pace) is judged against the
// pace before it began: taken at that deadline, the pace was the
// slowdown's, the endpoints "back" at once with figures that "did not
// move", and nothing was forgotten: the auto hedge delay stayed at 210 ms
// against 65 ms before, for four minutes (aftermath audit, stop 55).
func TestAftermath_ASlowdownNotedLateIsJudgedByThePaceBeforeItBegan(t *testing.T) {
	e, clock := clockedEngine(t, 2, nil)
	answer := func(d time.Duration, n int) {
		for _, ep := range e.endpoints {
			recordAnswers(ep, d, n)
		}
	}
	// A minute at 20 ms, the paces taken as the watch loop takes them.
	for range 12 {
		answer(20*time.Millisecond, 20)
		clock.Advance(paceEvery)
		e.notePaces(clock.Now())
	}
	slowFrom := clock.Now()
	// 20 s of 200 ms answers before a deadline is excused.
	for range 4 {
		answer(200*time.Millisecond, 100)
		clock.Advance(paceEvery)
		e.notePaces(clock.Now())
	}
	if fig, _, _, _ := e.endpoints[0].usualLatency(nil); fig < 100*time.Millisecond {
		t.Fatalf("the figure after 20 s of 200 ms answers is %v; the test wants it moved", fig)
	}
	e.after.noted(e, clock.Now(), false)
	e.after.mu.Lock()
	for ep, p := range e.after.eps {
		if p.pace > 30*time.Millisecond || p.began.After(slowFrom) || p.began.IsZero() {
			t.Errorf("%s: pace before %v, began %v; want about 20 ms, at or before %v", ep.Name, p.pace, p.began, slowFrom)
		}
	}
	e.after.mu.Unlock()
	// Back at 20 ms: its slowdown answers are forgotten, the figure reads
	// its pace again.
	answer(20*time.Millisecond, 3)
	for range 10 {
		clock.Advance(time.Second)
		e.after.check(e, clock.Now())
	}
	for _, ep := range e.endpoints {
		if fig, _, _, _ := ep.usualLatency(nil); fig > 30*time.Millisecond {
			t.Errorf("%s: figure %v after the slowdown; want its pace, 20 ms, its slowdown answers forgotten", ep.Name, fig)
		}
	}
}

// A pace taken from a young window is its median alone, and the figure
// is judged against it like for like: an endpoint whose window filled
// with its own tail (12 % of answers at 300 ms) beside its 20 ms body
// keeps its answers, its median not moved; one the slowdown moved (its
// answers since at 300 ms) has them forgotten. Judged by the blend with
// the p90 that a fuller window takes, three endpoints with 8 % of their
// answers at 240-360 ms lost their tails from the windows that set their
// attempt deadlines, and the hedge delays 300 of their 500 primaries,
// after two tails passed deadlines at the 250 ms floor together
// (TestTuning_ChangeStartsATrialOfTheForecast).
func TestAftermath_AYoungWindowsPaceIsItsMedian(t *testing.T) {
	e, clock := clockedEngine(t, 2, nil)
	tailed, slowed := e.endpoints[0], e.endpoints[1]
	for _, ep := range e.endpoints {
		recordAnswers(ep, 20*time.Millisecond, 30)
	}
	e.after.noted(e, clock.Now(), false)
	recordAnswers(tailed, 20*time.Millisecond, 58)
	recordAnswers(tailed, 300*time.Millisecond, 12)
	recordAnswers(slowed, 300*time.Millisecond, 70)
	for _, ep := range e.endpoints {
		if fig, _, _, _ := ep.usualLatency(nil); fig < 100*time.Millisecond {
			t.Fatalf("%s: figure %v; the test wants it moved", ep.Name, fig)
		}
		recordAnswers(ep, 20*time.Millisecond, 3) // back at 20 ms
	}
	tailedBefore, slowedBefore := tailed.latency.Count(), slowed.latency.Count()
	for range 10 {
		clock.Advance(time.Second)
		e.after.check(e, clock.Now())
	}
	if n := tailed.latency.Count(); n != tailedBefore {
		t.Errorf("%s, its median at 20 ms throughout, holds %d answers of %d: want its tail kept", tailed.Name, n, tailedBefore)
	}
	if n := slowed.latency.Count(); n >= slowedBefore {
		t.Errorf("%s, its median moved to 300 ms, holds %d answers of %d: want the slowdown's forgotten", slowed.Name, n, slowedBefore)
	}
}

// A pool slowdown whose answers are a small share of each endpoint's
// window moves no routing figure (its p90 is still the pace before) but
// may move the p95 of the primaries that set an auto hedge delay: once the
// endpoints are back, the primaries of each method whose quantile moved
// are forgotten, and those of one whose quantile did not (in a tail of
// its own, before and after) are kept. Before, only an endpoint's moved
// figure forgot them: three 20 ms endpoints at 220 ms for 10 s left the
// auto delay at 223 ms (TestHedge_APoolSlowdownUnderTheDeadlinesIsForgottenOnceBack,
// fresh-clone CI s58f-2). Only when the queue guard noted the slowdown
// (medians moved): deadlines passed at once, and no more, may be tails
// coinciding, and the primaries are kept.
func TestAftermath_AHedgeDelayTheSlowdownMovedIsForgottenThoughNoFigureMoved(t *testing.T) {
	for _, byMedians := range []bool{true, false} {
		t.Run(map[bool]string{true: "noted by the queue guard", false: "noted by deadlines alone"}[byMedians], func(t *testing.T) {
			hedgeDelayAfterASlowdownNoFigureSaw(t, byMedians)
		})
	}
}

func hedgeDelayAfterASlowdownNoFigureSaw(t *testing.T, byMedians bool) {
	e, clock := clockedEngine(t, 2, nil)
	answer := func(d time.Duration, n int) {
		for _, ep := range e.endpoints {
			recordAnswers(ep, d, n)
		}
	}
	primaries := func(method string, d time.Duration, n int) {
		for range n {
			e.hedge.observePrimary(method, d, false)
		}
	}
	const ms = time.Millisecond
	answer(20*ms, 500)
	primaries("eth_getBalance", 20*ms, 500)
	primaries("eth_call", 20*ms, 460)
	primaries("eth_call", 300*ms, 40) // a tail of 8 %: its p95 is in it
	clock.Advance(2 * time.Minute)    // the slowdown in sub-windows of its own
	e.after.noted(e, clock.Now(), byMedians)
	answer(220*ms, 40) // 7 % of each window
	primaries("eth_getBalance", 220*ms, 80)
	primaries("eth_call", 20*ms, 92)
	primaries("eth_call", 300*ms, 8)
	for _, ep := range e.endpoints {
		if fig, _, _, _ := ep.usualLatency(nil); fig > 30*ms {
			t.Fatalf("%s: figure %v; the test wants it unmoved", ep.Name, fig)
		}
	}
	if d := e.hedge.delayFor("eth_getBalance").Delay; d < 200*ms {
		t.Fatalf("eth_getBalance's auto delay %v; the test wants it moved by the slowdown", d)
	}
	callDelay := e.hedge.delayFor("eth_call").Delay
	balances, _ := e.hedge.method("eth_getBalance").primaries.Counts()
	calls, _ := e.hedge.method("eth_call").primaries.Counts()
	answer(20*ms, 3) // back at 20 ms
	for range 10 {
		clock.Advance(time.Second)
		e.after.check(e, clock.Now())
	}
	if n, _ := e.hedge.method("eth_call").primaries.Counts(); n != calls {
		t.Errorf("eth_call, its p95 in its own tail throughout (%v), holds %d primaries of %d: want them kept", callDelay, n, calls)
	}
	var said bool
	for _, ev := range e.events.since(0) {
		said = said || ev.Type == EventPool && strings.Contains(ev.Message, "hedge delays' primaries since") &&
			strings.Contains(ev.Message, "eth_getBalance") && !strings.Contains(ev.Message, "eth_call")
	}
	if !byMedians {
		if n, _ := e.hedge.method("eth_getBalance").primaries.Counts(); n != balances || said {
			t.Errorf("eth_getBalance holds %d primaries of %d (event: %v); want them kept, no median having moved", n, balances, said)
		}
		return
	}
	if d := e.hedge.delayFor("eth_getBalance").Delay; d > 30*ms {
		t.Errorf("eth_getBalance's auto delay %v once the pool is back; want its pace before, about 20 ms", d)
	}
	if !said {
		t.Errorf("no event names eth_getBalance's primaries forgotten (and eth_call's kept): %+v", e.events.since(0))
	}
}

// recordAnswers records n answers of d on ep, as its window and its last
// answers take them.
func recordAnswers(ep *endpoint, d time.Duration, n int) {
	for range n {
		ep.latency.Record(d)
		ep.last.add(d)
	}
}
