package window

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A hedged endpoint's slow primaries are cut short when the hedge wins:
// the summary's percentiles count them (Kaplan–Meier) instead of showing
// the quick answers alone, and where the censored mass lies past every
// answer, the percentiles there are lower bounds, never the body's tail.
func TestSummary_CensoredTailIsCountedAndMarkedALowerBound(t *testing.T) {
	t0 := time.Unix(0, 0)
	w := NewLatency(time.Hour, 1, func() time.Time { return t0 })
	rng := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		if rng.Float64() < 0.05 {
			w.RecordCensored(90 * time.Millisecond) // a tail answer its hedge outran
			continue
		}
		w.Record(time.Duration(20+rng.IntN(40)) * time.Millisecond)
	}
	s := w.Summary()
	if s.Open[0] || s.Open[1] || s.P50 > 50*time.Millisecond {
		t.Fatalf("p50 %v p90 %v open %v: the body is answered, it is no bound", s.P50, s.P90, s.Open)
	}
	for i, v := range []time.Duration{s.P99, s.P999} {
		if !s.Open[3+i] || v < 90*time.Millisecond {
			t.Fatalf("p99 %v p99.9 %v open %v: every observation past 60ms was cut short at 90ms, they are at least that", s.P99, s.P999, s.Open)
		}
	}
	if s.Max >= 60*time.Millisecond {
		t.Fatalf("max %v: the slowest answer, not a censoring time", s.Max)
	}
}

// With answers past the censoring (enough to carry the tail), the
// percentiles are the product-limit estimate, QuantileCensored's, and
// not bounds.
func TestSummary_MatchesQuantileCensoredWhereAnswered(t *testing.T) {
	t0 := time.Unix(0, 0)
	w := NewLatency(time.Hour, 1, func() time.Time { return t0 })
	rng := rand.New(rand.NewPCG(9, 9))
	for range 5000 {
		d := time.Duration(20+rng.IntN(400)) * time.Millisecond
		if rng.Float64() < 0.1 {
			w.RecordCensored(d / 2)
			continue
		}
		w.Record(d)
	}
	s := w.Summary()
	for i, v := range []time.Duration{s.P50, s.P90, s.P95, s.P99} {
		if want := w.QuantileCensored(SummaryQuantiles[i]); v != want || s.Open[i] {
			t.Fatalf("q %v: summary %v open %v, QuantileCensored %v", SummaryQuantiles[i], v, s.Open[i], want)
		}
	}
	if s.P99 <= w.Quantile(0.99) && s.P50 <= w.Quantile(0.5) {
		t.Fatalf("p50 %v p99 %v: censoring moves the estimate up from the answers' %v %v", s.P50, s.P99, w.Quantile(0.5), w.Quantile(0.99))
	}
}

// Without censored observations the summary is the answers' percentiles,
// as it always was.
func TestSummary_WithoutCensoringIsTheAnswers(t *testing.T) {
	t0 := time.Unix(0, 0)
	w := NewLatency(time.Hour, 1, func() time.Time { return t0 })
	for _, v := range lognormalMicros(5, 3000, 30*time.Millisecond, 0.5) {
		w.Record(us(v))
	}
	s := w.Summary()
	for i, v := range []time.Duration{s.P50, s.P90, s.P95, s.P99, s.P999} {
		if want := w.Quantile(SummaryQuantiles[i]); v != want || s.Open[i] {
			t.Fatalf("q %v: %v open %v, want %v", SummaryQuantiles[i], v, s.Open[i], want)
		}
	}
}

// Censoring that dominates the tail, with only a few answers past it,
// stops the estimate at the last answer before it, as the hedge delay's
// horizon does: two late answers do not carry the mass of a hundred
// primaries cut short.
func TestSummary_DominatedTailStopsAtTheHorizon(t *testing.T) {
	t0 := time.Unix(0, 0)
	w := NewLatency(time.Hour, 1, func() time.Time { return t0 })
	for i := range 1000 {
		w.Record(time.Duration(20+i%30) * time.Millisecond)
	}
	for range 100 {
		w.RecordCensored(80 * time.Millisecond)
	}
	w.Record(700 * time.Millisecond)
	w.Record(750 * time.Millisecond)
	s := w.Summary()
	if !s.Open[3] || s.P99 >= 700*time.Millisecond || s.P99 < 49*time.Millisecond {
		t.Fatalf("p99 %v open %v: a lower bound at the last answer before censoring dominates", s.P99, s.Open[3])
	}
	if s.Max < 700*time.Millisecond {
		t.Fatalf("max %v: the slowest answer", s.Max)
	}
}
