package window

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/internal/testutil"
)

// benchWindow is a window filled with a realistic spread of latencies.
func benchWindow(b *testing.B, censored bool) (*Latency, []time.Duration) {
	b.Helper()
	w := NewLatency(5*time.Minute, 5, nil)
	raw := lognormalMicros(99, 8192, 40*time.Millisecond, 0.8)
	ds := make([]time.Duration, len(raw))
	for i, v := range raw {
		ds[i] = us(v)
		w.Record(ds[i])
		if censored && i%10 == 0 {
			w.RecordCensored(ds[i])
		}
	}
	return w, ds
}

func BenchmarkLatencyWindowRecord(b *testing.B) {
	w, ds := benchWindow(b, false)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		w.Record(ds[i&(len(ds)-1)])
		i++
	}
}

func BenchmarkLatencyWindowRecordParallel(b *testing.B) {
	w, ds := benchWindow(b, false)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			w.Record(ds[i&(len(ds)-1)])
			i++
		}
	})
}

func BenchmarkLatencyWindowQuantile(b *testing.B) {
	w, _ := benchWindow(b, false)
	b.ReportAllocs()
	for b.Loop() {
		_ = w.Quantile(0.95)
	}
}

func BenchmarkLatencyWindowQuantileCensored(b *testing.B) {
	w, _ := benchWindow(b, true)
	b.ReportAllocs()
	for b.Loop() {
		_ = w.QuantileCensored(0.95)
	}
}

// A rotation rebuilds the aggregate from the surviving sub-windows.
func BenchmarkLatencyWindowRotate(b *testing.B) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(5*time.Second, 5, clk.Now)
	raw := lognormalMicros(99, 8192, 40*time.Millisecond, 0.8)
	for i := range 5 {
		for _, v := range raw[i*1024 : (i+1)*1024] {
			w.Record(us(v))
		}
		clk.Advance(time.Second)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		clk.Advance(time.Second)
		w.Record(us(raw[i&8191]))
		i++
	}
}

func BenchmarkRateWindowAdd(b *testing.B) {
	r := NewRates(5*time.Minute, 5, nil)
	b.ReportAllocs()
	for b.Loop() {
		r.Add(Attempts, 1)
	}
}

// The estimate QuantileCensored computes when its cached one is stale.
func BenchmarkLatencyWindowQuantileCensoredRecompute(b *testing.B) {
	w, _ := benchWindow(b, true)
	qs, vals, open := [1]float64{0.95}, [1]time.Duration{}, [1]bool{}
	b.ReportAllocs()
	for b.Loop() {
		w.mu.Lock()
		w.productLimitLocked(w.exact, qs[:], vals[:], open[:], kmCurveEnd)
		w.mu.Unlock()
	}
}
