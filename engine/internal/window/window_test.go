package window

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/rpcdash/rpcdash/internal/testutil"
)

// lognormalMicros draws n latencies (whole microseconds) around median.
func lognormalMicros(seed uint64, n int, median time.Duration, sigma float64) []int64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(float64(median/time.Microsecond) * math.Exp(sigma*rng.NormFloat64()))
	}
	return out
}

// exactQuantile uses HdrHistogram's rank rule (nearest rank, at least 1).
func exactQuantile(sorted []int64, q float64) int64 {
	rank := max(int(q*float64(len(sorted))+0.5), 1)
	return sorted[min(rank, len(sorted))-1]
}

func us(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

func TestBucketTop_MatchesHdrHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	vals := []int64{1, 2, 255, 256, 257, 511, 512, 1000, 1023, 1024, latencyMaxMicros}
	for range 5000 {
		vals = append(vals, 1+rng.Int64N(latencyMaxMicros))
	}
	for _, v := range vals {
		h := newLatencyHistogram()
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		if got, want := bucketTop(v), h.Max(); got != want {
			t.Fatalf("bucketTop(%d) = %d, HdrHistogram says %d", v, got, want)
		}
		if width := bucketTop(v) - v; float64(width) > float64(v)/128+1 {
			t.Fatalf("bucket of %d is %d wide, above 2 significant figures", v, width)
		}
	}
}

func TestLatencyWindow_QuantilesOfLognormal(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(time.Minute, 5, clk.Now)
	samples := lognormalMicros(42, 10000, 40*time.Millisecond, 0.6)
	var sum float64
	for _, v := range samples {
		w.Record(us(v))
		sum += float64(v)
	}
	sorted := slices.Sorted(slices.Values(samples))
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
		exact := exactQuantile(sorted, q)
		got := w.Quantile(q)
		if got != us(bucketTop(exact)) {
			t.Errorf("p%v = %s, exact %s: not the top of its bucket (%s)", q*100, got, us(exact), us(bucketTop(exact)))
		}
		if got < us(exact) || got-us(exact) > us(exact)/128+time.Microsecond {
			t.Errorf("p%v = %s is more than one bucket from exact %s", q*100, got, us(exact))
		}
	}
	s := w.Summary()
	if s.Count != 10000 || s.Censored != 0 || w.Count() != 10000 {
		t.Fatalf("count %d censored %d", s.Count, s.Censored)
	}
	if s.P95 != w.Quantile(0.95) || s.P50 != w.Quantile(0.5) || s.P999 != w.Quantile(0.999) {
		t.Fatalf("summary %+v disagrees with Quantile", s)
	}
	if top := us(bucketTop(sorted[len(sorted)-1])); s.Max != top {
		t.Fatalf("max %s, want %s", s.Max, top)
	}
	if mean := us(int64(sum / float64(len(samples)))); math.Abs(float64(s.Mean-mean)) > 0.01*float64(mean) {
		t.Fatalf("mean %s, exact %s", s.Mean, mean)
	}
}

func TestLatencyWindow_EmptyAndClamped(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(time.Minute, 0, clk.Now) // 0 buckets means the default
	if w.Quantile(0.5) != 0 || w.QuantileCensored(0.5) != 0 || w.Count() != 0 || w.Summary() != (Summary{}) {
		t.Fatal("an empty window must answer zero")
	}
	if n := len(w.Recent()); n != DefaultBuckets {
		t.Fatalf("%d sub-windows, want %d", n, DefaultBuckets)
	}
	w.Record(20 * time.Minute)
	w.Record(-time.Second)
	w.Record(0)
	if w.Count() != 3 {
		t.Fatalf("count %d: out-of-range values must be clamped, not dropped", w.Count())
	}
	if got := w.Quantile(1); got < 10*time.Minute || got > 10*time.Minute+10*time.Minute/128 {
		t.Fatalf("max %s, want 10m clamped", got)
	}
	if got := w.Quantile(0); got != time.Microsecond {
		t.Fatalf("min %s, want 1µs", got)
	}
}

func TestLatencyWindow_AgesOutAfterSpan(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(5*time.Second, 5, clk.Now) // sub-windows of 1s
	for range 100 {
		w.Record(10 * time.Millisecond)
	}
	clk.Advance(4900 * time.Millisecond)
	for range 100 {
		w.Record(20 * time.Millisecond)
	}
	if w.Count() != 200 {
		t.Fatalf("count %d before the span ran out", w.Count())
	}
	clk.Advance(100 * time.Millisecond) // t=5s: the first sub-window is reused
	if n, p50 := w.Count(), w.Quantile(0.5); n != 100 || p50 != us(bucketTop(20000)) {
		t.Fatalf("after 5s: count %d p50 %s, want only the 20ms samples", n, p50)
	}
	clk.Advance(5 * time.Second)
	if w.Count() != 0 || w.Quantile(0.99) != 0 || w.Summary().Count != 0 {
		t.Fatal("everything should have aged out")
	}
	w.Record(time.Millisecond) // the window works again after going idle
	if w.Count() != 1 {
		t.Fatal("record after an idle span lost")
	}
}

func TestLatencyWindow_PartialRotation(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(4*time.Second, 4, clk.Now)
	for i := range 4 { // sub-window i holds i+1 samples of (i+1)ms
		for range i + 1 {
			w.Record(time.Duration(i+1) * time.Millisecond)
		}
		w.RecordCensored(time.Duration(i+1) * time.Millisecond)
		if i < 3 {
			clk.Advance(time.Second)
		}
	}
	want := []time.Duration{us(bucketTop(1000)), us(bucketTop(2000)), us(bucketTop(3000)), us(bucketTop(4000))}
	if got := w.Recent(); !slices.Equal(got, want) {
		t.Fatalf("recent %v, want %v", got, want)
	}
	if w.Count() != 10 || w.CensoredCount() != 4 {
		t.Fatalf("count %d censored %d", w.Count(), w.CensoredCount())
	}
	clk.Advance(2 * time.Second) // the 1ms and 2ms sub-windows go
	if got, want := w.Recent(), []time.Duration{want[2], want[3], 0, 0}; !slices.Equal(got, want) {
		t.Fatalf("recent %v, want %v", got, want)
	}
	h := newLatencyHistogram()
	_ = h.RecordValue(3000)
	if n, c, low := w.Count(), w.CensoredCount(), w.Quantile(0); n != 7 || c != 2 || low != us(h.Min()) {
		t.Fatalf("after 2 rotations: count %d censored %d min %s, want 7, 2, %s", n, c, low, us(h.Min()))
	}
	clk.Advance(-3 * time.Second) // a clock stepping back writes to the current sub-window
	w.Record(9 * time.Millisecond)
	clk.Advance(3 * time.Second)
	if got := w.Recent()[3]; got != us(bucketTop(9000)) {
		t.Fatalf("current sub-window %s after a clock step back", got)
	}
}

// The top 5% of a lognormal sample are cut short at the true p95, as hedged
// primaries are when the hedge answers first. Winners alone put the p95 low;
// the product-limit estimate puts it back.
func TestLatencyWindow_CensoredAtTrueP95(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(time.Minute, 5, clk.Now)
	samples := lognormalMicros(7, 10000, 40*time.Millisecond, 0.6)
	sorted := slices.Sorted(slices.Values(samples))
	p95 := exactQuantile(sorted, 0.95)
	var cut int64
	for _, v := range samples {
		if v > p95 {
			w.RecordCensored(us(p95))
			cut++
		} else {
			w.Record(us(v))
		}
	}
	if w.CensoredCount() != cut || w.Count() != 10000-cut || cut == 0 || cut > 500 {
		t.Fatalf("count %d censored %d", w.Count(), w.CensoredCount())
	}
	winners, km := w.Quantile(0.95), w.QuantileCensored(0.95)
	t.Logf("true p95 %s, winners-only %s, censored-aware %s", us(p95), winners, km)
	if km != us(bucketTop(p95)) {
		t.Errorf("censored-aware p95 %s, want the bucket of the true p95 %s", km, us(bucketTop(p95)))
	}
	if winners > us(p95)*9/10 {
		t.Errorf("winners-only p95 %s should be biased well below the true %s", winners, us(p95))
	}
	// Below the censoring point nothing is hidden: both agree with the truth.
	if p50 := us(bucketTop(exactQuantile(sorted, 0.5))); w.QuantileCensored(0.5) != p50 {
		t.Errorf("censored-aware p50 %s, want %s", w.QuantileCensored(0.5), p50)
	}
	// Past the last censoring the data say only "later than": a lower bound.
	if got := w.QuantileCensored(0.99); got != us(bucketTop(p95)) {
		t.Errorf("p99 beyond every censoring point: %s, want the largest observation %s", got, us(bucketTop(p95)))
	}
}

// With censoring times independent of the latency (the textbook setting),
// the estimator recovers the true quantiles where data remain at risk.
func TestLatencyWindow_RandomCensoringRecoversQuantiles(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(time.Minute, 5, clk.Now)
	x := lognormalMicros(11, 20000, 40*time.Millisecond, 0.5)
	c := lognormalMicros(12, 20000, 60*time.Millisecond, 0.5)
	for i := range x {
		if x[i] <= c[i] {
			w.Record(us(x[i]))
		} else {
			w.RecordCensored(us(c[i]))
		}
	}
	sorted := slices.Sorted(slices.Values(x))
	t.Logf("censored %d of %d", w.CensoredCount(), len(x))
	for _, q := range []float64{0.5, 0.8, 0.9} {
		truth := us(exactQuantile(sorted, q))
		km, winners := w.QuantileCensored(q), w.Quantile(q)
		t.Logf("p%v: true %s, censored-aware %s, winners-only %s", q*100, truth, km, winners)
		if math.Abs(float64(km-truth)) > 0.04*float64(truth) {
			t.Errorf("p%v: censored-aware %s is more than 4%% from the true %s", q*100, km, truth)
		}
		if winners > truth*95/100 {
			t.Errorf("p%v: winners-only %s should be biased low against %s", q*100, winners, truth)
		}
	}
}

// A hand-worked product-limit example, including the tie rule: a censored
// observation stays at risk in its own bucket.
func TestLatencyWindow_ProductLimitArithmetic(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(time.Minute, 5, clk.Now)
	ms := time.Millisecond
	for _, d := range []time.Duration{ms, ms, 3 * ms, 5 * ms} {
		w.Record(d)
	}
	w.RecordCensored(2 * ms)
	w.RecordCensored(4 * ms)
	// n=6: F(1ms)=2/6; at 3ms n=3: S=4/6·2/3, F=5/9; at 5ms n=1: F=1.
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.3, 1000}, {1.0 / 3, 1000}, {0.34, 3000}, {0.55, 3000}, {0.56, 5000}, {1, 5000}} {
		if got := w.QuantileCensored(c.q); got != us(bucketTop(c.want)) {
			t.Errorf("q=%v: %s, want %s", c.q, got, us(bucketTop(c.want)))
		}
	}

	tie := NewLatency(time.Minute, 5, clk.Now)
	tie.Record(ms)
	tie.RecordCensored(ms)
	tie.Record(2 * ms)
	tie.Record(2 * ms)
	// At 1ms both are at risk: F=1/4, short of 0.3 (taking the censored one
	// out first would give 1/3).
	if got := tie.QuantileCensored(0.3); got != us(bucketTop(2000)) {
		t.Errorf("tie: %s, want %s", got, us(bucketTop(2000)))
	}

	only := NewLatency(time.Minute, 5, clk.Now)
	only.RecordCensored(7 * ms)
	if got := only.QuantileCensored(0.5); got != us(bucketTop(7000)) || only.Quantile(0.5) != 0 {
		t.Errorf("censored only: %s, want the lower bound %s", got, us(bucketTop(7000)))
	}
}

func TestLatencyWindow_NoAllocations(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(5*time.Second, 5, clk.Now)
	samples := lognormalMicros(5, 4096, 40*time.Millisecond, 0.6)
	for _, v := range samples { // warm: buckets populated, scratch sized
		w.Record(us(v))
		w.RecordCensored(us(v))
	}
	w.QuantileCensored(0.95)
	i := 0
	for name, f := range map[string]func(){
		"Record":           func() { w.Record(us(samples[i%len(samples)])); i++ },
		"RecordCensored":   func() { w.RecordCensored(us(samples[i%len(samples)])); i++ },
		"Quantile":         func() { w.Quantile(0.95) },
		"QuantileCensored": func() { w.QuantileCensored(0.95) },
		"Summary":          func() { w.Summary() },
		"QuantilePair":     func() { w.QuantilePair(0.5, 0.9) },
		"AnswerQuantile":   func() { w.AnswerQuantile(0.99) },
		"Counts":           func() { w.Counts() },
	} {
		if a := testing.AllocsPerRun(200, f); a != 0 {
			t.Errorf("%s allocates %.1f times per call", name, a)
		}
	}
}

// Many goroutines record and query while the clock rotates the window; the
// aggregate must always equal the sum of the live sub-windows.
func TestLatencyWindow_ConcurrentUse(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(50*time.Millisecond, 5, clk.Now)
	r := NewRates(50*time.Millisecond, 5, clk.Now)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for i := range 2000 {
				d := time.Duration(1+rng.IntN(100_000)) * time.Microsecond
				switch i % 8 {
				case 0:
					clk.Advance(time.Millisecond)
				case 1:
					w.RecordCensored(d)
				case 2:
					_ = w.QuantileCensored(0.95)
				case 3:
					_ = w.Summary()
					_ = r.Totals()
				case 4:
					_ = w.Recent()
				default:
					w.Record(d)
					r.Add(Attempts, 1)
				}
			}
		}()
	}
	wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	var exact, cens int64
	for _, s := range w.slots {
		exact += total(s.exact)
		cens += total(s.cens)
	}
	if exact != total(w.exact) || cens != total(w.cens) {
		t.Fatalf("aggregate %d/%d, sub-windows hold %d/%d", total(w.exact), total(w.cens), exact, cens)
	}
	if exact == 0 {
		t.Fatal("nothing left in the window; the test exercised nothing")
	}
}

func TestRateWindow_TotalsAndAgeing(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	r := NewRates(10*time.Second, 5, clk.Now) // sub-windows of 2s
	if got := r.Totals(); got != (Totals{}) {
		t.Fatalf("fresh window: %+v", got)
	}
	r.Add(Attempts, 10)
	r.Add(Success, 7)
	r.Add(Failure, 2)
	r.Add(Timeout, 1)
	r.Add(numKinds, 99) // unknown kinds are ignored
	clk.Advance(3 * time.Second)
	r.Add(Attempts, 5)
	r.Add(RateLimited, 4)
	r.Add(Cancelled, 1)
	want := Totals{Attempts: 15, Success: 7, Failure: 2, Timeout: 1, RateLimited: 4, Cancelled: 1, Covered: 3 * time.Second}
	if got := r.Totals(); got != want {
		t.Fatalf("totals %+v, want %+v", got, want)
	}
	if got := want.PerSecond(Attempts); got != 5 {
		t.Fatalf("attempts per second %v, want 5", got)
	}
	for k, n := range map[Kind]int64{Attempts: 15, Success: 7, Failure: 2, Timeout: 1, RateLimited: 4, Cancelled: 1, numKinds: 0} {
		if want.Get(k) != n {
			t.Errorf("Get(%s) = %d, want %d", k, want.Get(k), n)
		}
	}
	clk.Advance(7 * time.Second) // t=10s: the first sub-window goes; the rest began at 2s
	if got := r.Totals(); got.Attempts != 5 || got.Success != 0 || got.RateLimited != 4 || got.Covered != 8*time.Second {
		t.Fatalf("after the span: %+v", got)
	}
	clk.Advance(time.Second) // t=11s: the live sub-windows reach back to 2s
	if got := r.Totals(); got.Covered != 9*time.Second {
		t.Fatalf("covered %s, want 9s", got.Covered)
	}
	clk.Advance(time.Hour)
	if got := r.Totals(); got.Attempts != 0 || got.RateLimited != 0 {
		t.Fatalf("after an idle hour: %+v", got)
	}
	if Timeout.String() != "timeout" || RateLimited.String() != "http429" {
		t.Fatal("kind names")
	}
}

func TestLatencyWindow_MemoryStaysSmall(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(5*time.Minute, 5, clk.Now)
	for i, v := range lognormalMicros(13, 50000, 40*time.Millisecond, 1.0) {
		if i%10000 == 0 {
			clk.Advance(time.Minute)
		}
		w.Record(us(v))
		w.RecordCensored(us(v))
	}
	size := 0
	for _, h := range []*hdr.PackedHistogram{w.exact, w.cens} {
		size += h.GetMemorySize()
	}
	for _, s := range w.slots {
		size += s.exact.GetMemorySize() + s.cens.GetMemorySize()
	}
	dense := 2 * (len(w.slots) + 1) * hdr.New(1, latencyMaxMicros, latencySigFigs).ByteSize()
	t.Logf("50k exact and 50k censored samples (lognormal, sigma 1) hold %d bytes of histograms; dense ones would hold %d", size, dense)
	if size > dense/3 {
		t.Fatalf("histograms hold %d bytes, want under a third of dense (%d)", size, dense)
	}
}

func TestLatencyWindow_CensoredEstimateStalenessBound(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(5*time.Second, 5, clk.Now)
	ms := time.Millisecond
	w.Record(ms)
	w.RecordCensored(ms)
	w.Record(2 * ms)
	w.Record(2 * ms)
	first := w.QuantileCensored(0.3) // 2ms, see the tie case above
	for range 10 {
		w.Record(ms) // now the 1ms bucket alone passes 0.3
	}
	if got := w.QuantileCensored(0.3); got != first {
		t.Fatalf("within the refresh bound the estimate should be reused: %s, was %s", got, first)
	}
	if got := w.QuantileCensored(0.31); got != us(bucketTop(1000)) {
		t.Fatalf("another q is computed afresh: %s", got)
	}
	clk.Advance(censoredRefresh)
	if got := w.QuantileCensored(0.3); got != us(bucketTop(1000)) {
		t.Fatalf("after the refresh bound: %s, want %s", got, us(bucketTop(1000)))
	}
	clk.Advance(time.Second)
	w.Record(9 * ms)
	w.RecordCensored(20 * ms)
	if got := w.QuantileCensored(0.3); got != us(bucketTop(1000)) {
		t.Fatalf("before ageing: %s", got)
	}
	clk.Advance(4 * time.Second) // the first sub-window ages out: recompute at once
	if got := w.QuantileCensored(0.3); got != us(bucketTop(9000)) {
		t.Fatalf("after the first sub-window aged out: %s, want %s", got, us(bucketTop(9000)))
	}
}

// SummaryWith counts the extra observations in without recording them: the
// summary is the one the window would give with them, and the window is
// left as it was.
func TestLatencyWindow_SummaryWithCountsExtraObservationsIn(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w, both := NewLatency(time.Minute, 0, clk.Now), NewLatency(time.Minute, 0, clk.Now)
	if got := w.SummaryWith([]time.Duration{600 * time.Millisecond}); got.Count != 1 || got.Max != us(bucketTop(600000)) {
		t.Fatalf("empty window with one extra: %+v", got)
	}
	for i := range 99 {
		d := time.Duration(10+i%7) * time.Millisecond
		w.Record(d)
		both.Record(d)
	}
	w.RecordCensored(time.Second)
	both.RecordCensored(time.Second)
	extra := []time.Duration{600 * time.Millisecond, 610 * time.Millisecond, 620 * time.Millisecond}
	for _, d := range extra {
		both.Record(d)
	}
	before := w.Summary()
	if got, want := w.SummaryWith(extra), both.Summary(); got != want {
		t.Fatalf("SummaryWith = %+v, want the summary with them recorded %+v", got, want)
	}
	if after := w.Summary(); after != before || after.Max >= 600*time.Millisecond {
		t.Fatalf("the window changed: %+v, was %+v", after, before)
	}
	if got := w.SummaryWith(nil); got != before {
		t.Fatalf("SummaryWith(nil) = %+v, want Summary %+v", got, before)
	}
}

// A 5 % tail far past the body is 5 % whether its answers arrive or are
// cut short by hedges; a body without a tail has none, and races lost near
// the usual pace are not a tail.
func TestLatencyWindow_TailShareSeesTheTailHedgingCutShort(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	body := lognormalMicros(3, 1900, 50*time.Millisecond, 0.3)
	rng := rand.New(rand.NewPCG(4, 1))

	answered := NewLatency(time.Minute, 5, clk.Now)
	hedged := NewLatency(time.Minute, 5, clk.Now)
	for i, v := range body {
		answered.Record(us(v))
		hedged.Record(us(v))
		if i%19 == 0 { // 100 tail answers of 400–1200 ms
			answered.Record(400*time.Millisecond + time.Duration(rng.Int64N(int64(800*time.Millisecond))))
			hedged.RecordCensored(110 * time.Millisecond) // a hedge won at 110 ms
		}
	}
	for name, w := range map[string]*Latency{"answered": answered, "cut short by hedges": hedged} {
		share, n := w.TailShare(0, 4, 1.5, 5*time.Millisecond)
		if n != 2000 || math.Abs(share-0.05) > 0.002 {
			t.Errorf("%s: tail share %.4f of %d, want 0.05 of 2000", name, share, n)
		}
	}

	steady := NewLatency(time.Minute, 5, clk.Now)
	for i, v := range lognormalMicros(5, 2000, 40*time.Millisecond, 0.3) {
		steady.Record(us(v))
		if i%4 == 0 {
			steady.RecordCensored(35 * time.Millisecond) // raced from the start (immediate hedging), lost
		}
	}
	if share, n := steady.TailShare(0, 4, 1.5, 5*time.Millisecond); share != 0 || n != 2500 {
		t.Errorf("lognormal σ 0.3 without a tail: tail share %.4f of %d, want 0 of 2500", share, n)
	}
	if share, n := NewLatency(time.Minute, 5, clk.Now).TailShare(0, 4, 1.5, 5*time.Millisecond); share != 0 || n != 0 {
		t.Errorf("empty window: %v of %d", share, n)
	}
}

// A batch's calls are counted at once: n of a kind under one lock count
// as n counted one by one, and n observations of one latency recorded
// together weigh as n recorded apart.
func TestWindows_CountNAndRecordNAreNOfOne(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	together, apart := NewRates(10*time.Second, 5, clk.Now), NewRates(10*time.Second, 5, clk.Now)
	together.CountN(250, Attempts, Success)
	together.CountN(3, Attempts, Failure, numKinds) // the unknown kind ignored
	for range 250 {
		apart.Count(Attempts, Success)
	}
	for range 3 {
		apart.Count(Attempts, Failure)
	}
	if a, b := together.Totals(), apart.Totals(); a != b || a.Attempts != 253 || a.Success != 250 || a.Failure != 3 {
		t.Fatalf("CountN totals %+v, one by one %+v", a, b)
	}

	lt, la := NewLatency(time.Minute, 12, clk.Now), NewLatency(time.Minute, 12, clk.Now)
	lt.RecordN(40*time.Millisecond, 990)
	lt.RecordN(700*time.Millisecond, 10)
	for range 990 {
		la.Record(40 * time.Millisecond)
	}
	for range 10 {
		la.Record(700 * time.Millisecond)
	}
	for _, q := range []float64{0.5, 0.98, 0.99, 0.995} {
		if a, b := lt.Quantile(q), la.Quantile(q); a != b {
			t.Errorf("q%g: RecordN %s, one by one %s", q, a, b)
		}
	}
	if lt.Count() != 1000 || lt.Quantile(0.995) < 700*time.Millisecond || lt.Quantile(0.98) > 41*time.Millisecond {
		t.Fatalf("RecordN: %d observations, p98 %s, p99.5 %s", lt.Count(), lt.Quantile(0.98), lt.Quantile(0.995))
	}
}

// Forget drops what was recorded since a time, whole sub-windows from the
// one holding it, exact and censored, and the estimates follow at once.
func TestLatencyWindow_ForgetDropsTheSubWindowsSinceATime(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	w := NewLatency(5*time.Second, 5, clk.Now) // sub-windows of 1s
	for range 100 {
		w.Record(10 * time.Millisecond)
	}
	clk.Advance(2500 * time.Millisecond)
	since := clk.Now()
	for range 100 {
		w.Record(3 * time.Second)
		w.RecordCensored(3 * time.Second)
	}
	clk.Advance(time.Second)
	for range 50 {
		w.Record(3 * time.Second)
	}
	if p99 := w.QuantileCensored(0.99); p99 < time.Second {
		t.Fatalf("p99 %v before forgetting; want the slow stretch's", p99)
	}
	if got, from := w.Forget(since); got != 150 || !from.Equal(testutil.Epoch.Add(2*time.Second)) {
		t.Fatalf("forgot %d from %v; want the 150 exact observations from %v, the sub-window holding %v", got, from, testutil.Epoch.Add(2*time.Second), since)
	}
	exact, cens := w.Counts()
	if exact != 100 || cens != 0 || w.QuantileCensored(0.99) != us(bucketTop(10000)) || w.Quantile(0.5) != us(bucketTop(10000)) {
		t.Fatalf("after forgetting: %d exact, %d censored, p99 %v; want the first 100 at 10ms alone", exact, cens, w.QuantileCensored(0.99))
	}
	if n, _ := w.Forget(since); n != 0 {
		t.Fatal("forgot again what was gone")
	}
	w.Record(time.Millisecond)
	if exact, _ := w.Counts(); exact != 101 {
		t.Fatalf("%d exact after a record; the window should go on", exact)
	}
	if n, _ := w.Forget(testutil.Epoch.Add(-time.Hour)); n != 101 {
		t.Fatal("forgetting since before the window began should drop it all")
	}
}

// TotalsOutside leaves out what was counted between two marks for as long
// as it is in the window, and only that: the counts before the first and
// after the second, in the same sub-windows or others, stay.
func TestRates_TotalsOutsideLeavesOutWhatCameBetweenTheMarks(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	r := NewRates(10*time.Second, 5, clk.Now) // sub-windows of 2s
	r.CountN(3, Attempts, Failure)            // sub-window 0, before
	from := r.Mark()
	r.CountN(30, Attempts, Failure) // sub-window 0, between
	clk.Advance(3 * time.Second)
	r.CountN(10, Attempts, Failure) // sub-window 1, between
	to := r.Mark()
	r.CountN(4, Attempts, Success) // sub-window 1, after
	clk.Advance(2 * time.Second)
	r.CountN(5, Attempts, Success) // sub-window 2, after
	got := r.TotalsOutside(Stretch{from, to})
	if got.Attempts != 12 || got.Failure != 3 || got.Success != 9 {
		t.Fatalf("outside the marks: %+v, want 12 attempts, 3 failures, 9 successes", got)
	}
	if all := r.Totals(); all.Attempts != 52 || all.Failure != 43 {
		t.Errorf("Totals %+v, want every count", all)
	}
	if got.Covered != r.Totals().Covered {
		t.Errorf("covered %s, want the window's %s", got.Covered, r.Totals().Covered)
	}
	// Sub-window 0 leaves the window, with its part before and between.
	clk.Advance(6 * time.Second)
	if got := r.TotalsOutside(Stretch{from, to}); got.Attempts != 9 || got.Failure != 0 {
		t.Errorf("after sub-window 0 went: %+v", got)
	}
	clk.Advance(4 * time.Second)
	if got := r.TotalsOutside(Stretch{from, to}); got.Attempts != 0 || got.Failure != 0 {
		t.Errorf("after the marked sub-windows went: %+v", got)
	}
	if got := r.TotalsOutside(Stretch{from, nil}); got != r.Totals() {
		t.Errorf("one mark: %+v, want Totals %+v", got, r.Totals())
	}
	if r.Within(Stretch{from, to}) {
		t.Error("a stretch whose sub-windows all left the window is still within it")
	}
}

// Each stretch is left out, not only the last: an endpoint whose breaker
// opened twice in the window had the first stretch's failures back when
// the second closed (review, stop 56).
func TestRates_TotalsOutsideLeavesOutEveryStretch(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	r := NewRates(10*time.Second, 5, clk.Now)
	r.CountN(20, Attempts, Success)
	a := r.Mark()
	r.CountN(100, Attempts, Failure) // first stretch
	b := r.Mark()
	clk.Advance(2 * time.Second)
	r.CountN(5, Attempts, Success)
	c := r.Mark()
	r.CountN(7, Attempts, Failure) // second stretch
	d := r.Mark()
	if got := r.TotalsOutside(Stretch{a, b}, Stretch{c, d}); got.Attempts != 25 || got.Failure != 0 {
		t.Fatalf("outside both stretches: %+v, want 25 attempts and no failure", got)
	}
	if !r.Within(Stretch{a, b}) || !r.Within(Stretch{c, d}) {
		t.Error("stretches in the window said to be out of it")
	}
}

func TestRates_PerSecondOverAFixedStretch(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	r := NewRates(10*time.Second, 5, clk.Now) // sub-windows of 2s; the stretch is 8s
	r.Add(Attempts, 4)
	clk.Advance(500 * time.Millisecond)
	if got := r.PerSecond(Attempts, 0); got != 4 {
		t.Fatalf("at 0.5s %v a second, want 4 (over at least a second)", got)
	}
	clk.Advance(3500 * time.Millisecond) // t=4s
	if got := r.PerSecond(Attempts, 0); got != 1 {
		t.Fatalf("at 4s %v a second, want 1 (over the 4s since the start)", got)
	}
	clk.Advance(5 * time.Second) // t=9s: the stretch is [1s, 9s], half of the first sub-window
	if got := r.PerSecond(Attempts, 0); got != 0.25 {
		t.Fatalf("at 9s %v a second, want 0.25 (half the first sub-window's 4 over 8s)", got)
	}
	if got := r.PerSecond(numKinds, 0); got != 0 {
		t.Fatalf("an unknown kind's rate %v", got)
	}
}

func TestRates_PerSecondOverTheLastWidths(t *testing.T) {
	clk := testutil.NewClock(testutil.Epoch)
	r := NewRates(10*time.Second, 5, clk.Now) // sub-windows of 2s
	clk.Advance(5 * time.Second)
	r.Add(Attempts, 6)           // in [4s, 6s)
	clk.Advance(2 * time.Second) // t=7s: the last 4s, [3s, 7s], hold [4s, 6s) whole
	if got := r.PerSecond(Attempts, 2); got != 1.5 {
		t.Fatalf("at 7s %v a second over the last two widths, want 1.5", got)
	}
	clk.Advance(2 * time.Second) // t=9s: [5s, 9s] holds half of [4s, 6s)
	if got := r.PerSecond(Attempts, 2); got != 0.75 {
		t.Fatalf("at 9s %v a second, want 0.75", got)
	}
}
