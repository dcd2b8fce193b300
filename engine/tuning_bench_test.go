package engine_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// What one refresh of the tuning view costs the engine: copying a window
// of the seeds' tail scenario (50 ms, σ 0.3, 2 % at 500–1000 ms) with its
// censored primaries, and forecasting the view's candidate delays.

func tailWindow(b *testing.B) *window.Latency {
	r := rand.New(rand.NewPCG(1, 2))
	w := newWindow()
	for range 100_000 {
		if x := seedsTail(r); x > 90*time.Millisecond && r.Float64() < 0.7 {
			w.RecordCensored(90*time.Millisecond + seedsTail(r)%x)
		} else {
			w.Record(x)
		}
	}
	return w
}

func BenchmarkLatencyWindow_Distribution(b *testing.B) {
	w := tailWindow(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = engine.WindowDistribution(w)
	}
}

func BenchmarkForecast_TenDelays(b *testing.B) {
	d := engine.WindowDistribution(tailWindow(b))
	targets := []engine.HedgeTarget{{Endpoint: "a", Weight: 2, Dist: d}, {Endpoint: "b", Weight: 1, Dist: d}, {Endpoint: "c", Weight: 1, Dist: d}}
	delays := []time.Duration{40, 60, 75, 88, 100, 120, 150, 200, 250, 500}
	b.ReportAllocs()
	for b.Loop() {
		for _, ms := range delays {
			_ = engine.Forecast(engine.ForecastInput{Primary: d, Targets: targets, Delay: ms * time.Millisecond, MaxExtra: 1, Budget: 0.1, Burst: 10})
		}
	}
}

// BenchmarkForecast_TenDelaysOneTarget is HedgeForecast's per-row path:
// the targets mixed once beforehand.
func BenchmarkForecast_TenDelaysOneTarget(b *testing.B) {
	d := engine.WindowDistribution(tailWindow(b))
	targets := []engine.HedgeTarget{{Endpoint: "mixture", Weight: 1, Dist: d}}
	delays := []time.Duration{40, 60, 75, 88, 100, 120, 150, 200, 250, 500}
	b.ReportAllocs()
	for b.Loop() {
		for _, ms := range delays {
			_ = engine.Forecast(engine.ForecastInput{Primary: d, Targets: targets, Delay: ms * time.Millisecond, MaxExtra: 1, Budget: 0.1, Burst: 10})
		}
	}
}
