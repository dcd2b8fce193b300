package engine

import (
	runtimemetrics "runtime/metrics"
	"testing"
	"time"
)

// The run-queue wait is the p99 of the scheduling latencies over the last
// runQueueSpan reads, from the runtime's cumulative histogram; a hedge is
// held while it is half the hedge delay or more (at least runQueueSlack).
func TestRunQueue_TheTailOfTheLastReadsHoldsHedgesOfShortDelays(t *testing.T) {
	ms := func(n float64) float64 { return n / 1000 }
	h := &runtimemetrics.Float64Histogram{Buckets: []float64{0, ms(1), ms(2), ms(4), ms(8), ms(1000)}, Counts: make([]uint64, 5)}
	var q runQueue
	// Quiet at first: 20 events a read, all under 1 ms.
	for range runQueueSpan {
		h.Counts[0] += 20
		q.observe(h)
	}
	if q.busyFor(2 * time.Millisecond) {
		t.Fatalf("p99 %s with every wait under 1 ms: busy", time.Duration(q.p99.Load()))
	}
	// Then 2 % of waits of 4-8 ms.
	for range runQueueSpan {
		h.Counts[0] += 49
		h.Counts[3]++
		q.observe(h)
	}
	if got := time.Duration(q.p99.Load()); got != 4*time.Millisecond {
		t.Fatalf("p99 %s, want 4ms (the bucket's lower bound)", got)
	}
	for delay, want := range map[time.Duration]bool{0: false, time.Millisecond: true, 5 * time.Millisecond: true, 8 * time.Millisecond: true, 9 * time.Millisecond: false, 50 * time.Millisecond: false} {
		if got := q.busyFor(delay); got != want {
			t.Errorf("busyFor(%s) = %v with a 4 ms p99 wait, want %v", delay, got, want)
		}
	}
	// The span is the last reads only: quiet again, it lets hedges go.
	for range runQueueSpan {
		h.Counts[0] += 100
		q.observe(h)
	}
	if q.busyFor(5 * time.Millisecond) {
		t.Fatalf("p99 %s after %d quiet reads: still busy", time.Duration(q.p99.Load()), runQueueSpan)
	}
	// Too few events say nothing.
	for range runQueueSpan {
		h.Counts[4]++
		q.observe(h)
	}
	if q.busyFor(5 * time.Millisecond) {
		t.Fatalf("p99 %s from %d events: busy", time.Duration(q.p99.Load()), runQueueSpan-1)
	}
}

// read takes the runtime's own histogram.
func TestRunQueue_ReadsTheRuntime(t *testing.T) {
	var q runQueue
	for range runQueueSpan + 1 {
		q.read()
	}
	if q.sample[0].Value.Kind() != runtimemetrics.KindFloat64Histogram {
		t.Fatalf("%s is not a histogram in this runtime", schedLatencies)
	}
}
