package engine

import (
	"cmp"
	"slices"
	"time"
)

// The endpoints of an upstream batch are ordered by how fast each answered
// upstream batches lately, once each has answered enough of them. The
// ranking's latency figures are single calls' and probes': a client that
// sends only batches gives it none, and until probes had told them apart,
// 4 in 10 of ten 50-call batches a second went to a 250 ms sim beside a
// 40 ms one (p99 361 ms through rpcdash, 63 ms sent to the 40 ms sim
// directly).

// orderByBatchPace orders eps, the ranking's endpoints for an upstream
// batch, by the routing cost (scoreParts) with each one's batch pace (the
// Kaplan–Meier median of its upstream batches' round trips, a batch it was
// outrun on censored) as its latency; left in the ranking's order unless
// every one has minRouteSamples round trips.
func (e *Engine) orderByBatchPace(eps []*endpoint) {
	if len(eps) < 2 {
		return
	}
	costs := make(map[*endpoint]time.Duration, len(eps))
	for _, ep := range eps {
		if exact, censored := ep.batchPace.Counts(); exact+censored < minRouteSamples || exact == 0 {
			return
		}
		pace := float64(ep.batchPace.QuantileCensored(0.5)) / float64(time.Millisecond)
		costs[ep] = e.scoreParts(ep, routeFigure{lat: pace, source: scoreFromBatches}, pace, 0, false).Cost
	}
	slices.SortStableFunc(eps, func(a, b *endpoint) int { return cmp.Compare(costs[a], costs[b]) })
}

// scoreFromBatches is the latency source of a batch pace's cost.
const scoreFromBatches = "batches"
