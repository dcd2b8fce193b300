package bench_test

import (
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
	"github.com/rpcdash/rpcdash/engine"
)

// 1, 2, …, 1000 ms: the q-quantile is q·1000 ms, and every value counts,
// whatever its outcome.
func TestFigures_PercentilesOfAKnownDistribution(t *testing.T) {
	var lat []time.Duration
	for i := 1000; i >= 1; i-- { // order does not matter
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	f := bench.FiguresOf(lat)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", f.P50, 500}, {"p95", f.P95, 950}, {"p99", f.P99, 990}, {"p99.9", f.P999, 999}, {"max", f.Max, 1000}} {
		// Nearest rank over the values themselves: exact.
		if c.got < c.want || c.got > c.want*1.001 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if f.N != 1000 || len(f.Thin) != 1 || f.Thin[0] != "p99.9" {
		t.Errorf("n %d, thin %v: want 1000 and only p99.9 thin (2 values beyond it)", f.N, f.Thin)
	}
	if empty := bench.FiguresOf(nil); empty.N != 0 || empty.P99 != 0 {
		t.Errorf("empty: %+v", empty)
	}
}

func TestFigures_BeyondCountsTheValuesAtOrAboveAPercentile(t *testing.T) {
	for _, c := range []struct {
		n    int
		q    float64
		want int
	}{{1000, 0.99, 11}, {1000, 0.999, 2}, {3000, 0.999, 4}, {10000, 0.999, 11}, {100, 0.5, 51}, {1, 0.99, 1}} {
		if got := bench.Beyond(c.n, c.q); got != c.want {
			t.Errorf("beyond(%d, %v) = %d, want %d", c.n, c.q, got, c.want)
		}
	}
}

func okAt(ms int) bench.Sample {
	return bench.Sample{Status: 200, Latency: time.Duration(ms) * time.Millisecond}
}

func failAt(ms int) bench.Sample {
	return bench.Sample{Err: "boom", Latency: time.Duration(ms) * time.Millisecond}
}

func TestCompletion_AllAndQuorum(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name  string
		calls []bench.Sample
		q     int
		want  time.Duration
		ok    bool
	}{
		{"all answer: the slowest", []bench.Sample{okAt(30), okAt(10), okAt(20)}, 3, 30 * ms, true},
		{"quorum 2: the second", []bench.Sample{okAt(30), okAt(10), okAt(20)}, 2, 20 * ms, true},
		{"quorum 1: the first", []bench.Sample{okAt(30), okAt(10), okAt(20)}, 1, 10 * ms, true},
		{"all: one failure dooms it when it fails", []bench.Sample{okAt(30), failAt(5), okAt(20)}, 3, 5 * ms, false},
		{"quorum 2 survives one failure", []bench.Sample{okAt(30), failAt(5), okAt(20)}, 2, 30 * ms, true},
		{"quorum 2 fails at the second failure", []bench.Sample{failAt(40), failAt(5), okAt(20)}, 2, 40 * ms, false},
		{"single call", []bench.Sample{okAt(7)}, 1, 7 * ms, true},
	} {
		got, ok := bench.Completion(c.calls, c.q)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %s %v, want %s %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestAmplification(t *testing.T) {
	if got := bench.Amplification(3150, 3000); got != 1.05 {
		t.Errorf("3150/3000 = %v", got)
	}
	if got := bench.Amplification(0, 0); got != 0 {
		t.Errorf("no requests: %v", got)
	}
}

// The seed's adverse case: ρ = 0.8 with h = 0.25 reaches 1.
func TestLoadCheck_FlagsAtOneAndAbove(t *testing.T) {
	for _, c := range []struct {
		perSec, capacity float64
		endpoints        int
		want             float64
		over             bool
	}{
		{240, 100, 3, 0.8, false},        // ρ = 0.8, no duplicates
		{240 * 1.25, 100, 3, 1.0, true},  // (1+0.25)·0.8 = 1: flagged
		{240 * 1.1, 100, 3, 0.88, false}, // (1+0.1)·0.8
		{500, 100, 1, 5, true},           // one endpoint swamped
	} {
		got, over := bench.LoadCheck(c.perSec, c.endpoints, c.capacity)
		if math.Abs(got-c.want) > 1e-9 || over != c.over {
			t.Errorf("%v/s on %d×%v: %v %v, want %v %v", c.perSec, c.endpoints, c.capacity, got, over, c.want, c.over)
		}
	}
	if got, over := bench.LoadCheck(100, 3, 0); got != 0 || over {
		t.Error("no capacity: no check")
	}
}

func TestWasted_SumsTheMixsMethodsOverTheSpan(t *testing.T) {
	before := map[string][2]float64{"eth_call": {10, 1.5}, "eth_getBalance": {4, 0.25}, "other": {100, 50}}
	after := map[string][2]float64{"eth_call": {25, 3.0}, "eth_getBalance": {6, 0.75}, "other": {900, 70}}
	w := bench.WastedOf(before, after, []string{"eth_call", "eth_getBalance", "eth_blockNumber"})
	if w.Cancelled != 17 || w.Source != "engine" || math.Abs(w.Seconds-2.0) > 1e-9 {
		t.Errorf("wasted %+v, want 17 cancelled and 2.0 s from the engine", w)
	}
}

func TestGeneratorWarning(t *testing.T) {
	onTime := make([]time.Duration, 1000)
	if msg := bench.GeneratorWarning(onTime); msg != "" {
		t.Errorf("on time: %q", msg)
	}
	late := make([]time.Duration, 1000)
	for i := range 20 {
		late[i] = 8 * time.Millisecond
	}
	if msg := bench.GeneratorWarning(late); !strings.Contains(msg, "20 of 1000") {
		t.Errorf("2%% late: %q", msg)
	}
	once := make([]time.Duration, 1000)
	once[0] = 200 * time.Millisecond
	if msg := bench.GeneratorWarning(once); !strings.Contains(msg, "200ms") {
		t.Errorf("one stall: %q", msg)
	}
}

// A hedged row counts, over its own span, the calls whose hedge a guard held
// back (the instance's hedges_refused), and warns only for the guards: the
// budget and hedge.max_outstanding are the row's own limits.
func TestHeldBackWarning_NamesTheGuardsOverTheRowsSpan(t *testing.T) {
	status := func(refused map[string]int64) engine.MethodStatus {
		return engine.MethodStatus{AccountSnapshot: engine.AccountSnapshot{HedgesRefused: refused}}
	}
	before := map[string]engine.MethodStatus{"eth_call": status(map[string]int64{"queue": 5}), "eth_chainId": status(map[string]int64{"late": 9})}
	after := map[string]engine.MethodStatus{
		"eth_call":       status(map[string]int64{"queue": 12, "budget": 4}),
		"eth_getBalance": status(map[string]int64{"late": 3, "queue": 1}),
		"eth_chainId":    status(map[string]int64{"late": 20}), // not in the mix
	}
	got := bench.RefusedBetween(before, after, []string{"eth_call", "eth_getBalance"})
	if want := map[string]int64{"queue": 8, "budget": 4, "late": 3}; !maps.Equal(got, want) {
		t.Fatalf("refused over the row: %v, want %v", got, want)
	}
	msg := bench.HeldBackWarning(got, 450)
	if !strings.HasPrefix(msg, "hedges held back: of 450 calls, a due hedge was not sent then for late 3 (") ||
		!strings.Contains(msg, "queue 8 (the queue guard") || strings.Contains(msg, "budget") {
		t.Fatalf("warning: %q", msg)
	}
	if msg := bench.HeldBackWarning(map[string]int64{"budget": 40, "max_outstanding": 2}, 450); msg != "" {
		t.Fatalf("the row's own limits only: %q", msg)
	}
	if got := bench.RefusedBetween(after, after, []string{"eth_call"}); got != nil {
		t.Fatalf("nothing over the span: %v", got)
	}
}
