package engine

import (
	runtimemetrics "runtime/metrics"
	"sync/atomic"
	"time"
)

// runQueue follows how long rpcdash's runnable goroutines have lately
// waited for a CPU, from the Go runtime's scheduling latencies. On a busy
// machine (other processes, or rpcdash at its own limit) an answer can sit
// unread for milliseconds with no timer firing late enough to call it a
// stall: a hedge at a 5 ms delay then chases an answer already in hand,
// and the work it adds starves the process further. Beside 1 ms endpoints
// at 3,000 req/s on a loaded 2-core machine, hedging took the p99 from
// 9-22 ms (off) to 15-334 ms (proxy overhead audit, stop 55).
type runQueue struct {
	sample []runtimemetrics.Sample
	// past are the cumulative bucket counts of the last runQueueSpan reads,
	// a ring: the wait is read over their span, not one tick's few events.
	past [runQueueSpan][]uint64
	next int
	p99  atomic.Int64 // nanoseconds, over the span; 0 until it spans runQueueSpan reads
}

const (
	runQueueSpan = 5 // reads, lagPeriod apart: the wait over the last 80 ms
	// runQueueMinEvents: the runtime records one scheduling wait in 8,
	// and below 100 recorded the p99 would be the longest single one
	// (review, stop 55): fewer say nothing of the tail.
	runQueueMinEvents = 100
)

const schedLatencies = "/sched/latencies:seconds"

// read takes the runtime's counts (watch calls it each lagPeriod, from
// one goroutine).
func (q *runQueue) read() {
	if q.sample == nil {
		q.sample = []runtimemetrics.Sample{{Name: schedLatencies}}
	}
	runtimemetrics.Read(q.sample)
	if q.sample[0].Value.Kind() == runtimemetrics.KindFloat64Histogram {
		q.observe(q.sample[0].Value.Float64Histogram())
	}
}

// observe keeps h, the runtime's cumulative scheduling latencies, and
// reads the p99 wait since runQueueSpan observations ago: the tail, since
// the answer a hedge would chase is one event among the many.
func (q *runQueue) observe(h *runtimemetrics.Float64Histogram) {
	cur := append(q.past[q.next][:0], h.Counts...)
	q.past[q.next] = cur
	q.next = (q.next + 1) % runQueueSpan
	oldest := q.past[q.next]
	if len(oldest) != len(cur) {
		return
	}
	var total uint64
	for i := range cur {
		total += cur[i] - oldest[i]
	}
	if total < runQueueMinEvents {
		q.p99.Store(0)
		return
	}
	want, seen := total-total/100, uint64(0)
	for i := range cur {
		if seen += cur[i] - oldest[i]; seen >= want {
			// The bucket's lower bound: the wait is at least that.
			q.p99.Store(int64(max(h.Buckets[i], 0) * float64(time.Second)))
			return
		}
	}
}

// busyFor says whether 1 % of goroutines lately waited for a CPU half of
// delay or more (and at least runQueueSlack): a hedge due after delay
// would likely chase an answer waiting unread.
func (q *runQueue) busyFor(delay time.Duration) bool {
	return delay > 0 && time.Duration(q.p99.Load()) >= max(delay/2, runQueueSlack)
}

// runQueueSlack is a wait any busy machine's goroutines have.
const runQueueSlack = time.Millisecond
