package engine

import (
	"time"
)

// batchDelay is when an upstream batch of methods is hedged, and whether
// it may be: never when hedging is off for any of its methods. A delay set
// for a method (config or live) is the least the batch waits; in auto
// mode it is the hedge quantile of upstream batches' round trips (the
// product-limit estimate, a primary cut by its winning hedge counted as
// censored, as for single calls), until enough are known the longest of
// its methods' own delays. A batch's round trip is no single call's
// latency (a node may run its calls one after another), so it is learnt
// apart from them.
func (h *hedger) batchDelay(methods []string) (time.Duration, bool) {
	var fixed, single time.Duration
	auto := false
	for _, m := range methods {
		di := h.delayFor(m)
		if !di.Enabled {
			return 0, false
		}
		switch di.Source {
		case "auto", "cold":
			auto = true
			single = max(single, di.Delay)
		default:
			fixed = max(fixed, di.Delay)
		}
	}
	if !auto {
		return fixed, true
	}
	learnt := h.learntBatchDelay()
	if learnt == 0 {
		learnt = single
	}
	return max(fixed, learnt), true
}

// learntBatchDelay is the hedge quantile of upstream batches' round trips
// within hedge.min_delay and max_delay, 0 until hedge.min_samples are
// known.
func (h *hedger) learntBatchDelay() time.Duration {
	if nE, nC := h.batches.Counts(); nE+nC < int64(h.cfg.MinSamples) {
		return 0
	}
	return min(max(h.batchQuantile(), h.cfg.MinDelay), h.cfg.MaxDelay)
}

// batchQuantile is the batches' round trips at hedge.quantile as in force.
func (h *hedger) batchQuantile() time.Duration {
	h.mu.RLock()
	q := h.quantile
	h.mu.RUnlock()
	return h.batches.DelayQuantile(q)
}

// observeBatch feeds the batch delay a primary upstream batch's round
// trip: exact when it answered, censored when its hedge won after it had
// run for d.
func (h *hedger) observeBatch(d time.Duration, censored bool) {
	if censored {
		h.batches.RecordCensored(d)
	} else {
		h.batches.Record(d)
	}
}
