package engine

import "github.com/rpcdash/rpcdash/engine/internal/window"

// openStretch is what an endpoint's rates held when its breaker last
// opened from closed and when it closed again. The attempts made between
// are left out of its routing score's failure rate: asked only after every
// routable endpoint had failed (a failover's last resort, panic routing)
// or as a trial, they say nothing of how it ranks beside the others once
// it is back, and they kept the fastest endpoint, readmitted and well,
// ranked after slower ones for the rest of the window (console audit, stop
// 56: an error factor of 8.75, from 1,165 failures of reads that failed
// over to it while it was open in an outage of every endpoint). Envoy's
// outlier detection likewise judges a host it lets back in afresh. The
// failures that opened it count on, and its error rate shown keeps all.
type openStretch struct{ from, to *window.Mark }

// noteClosed ends the stretch its breaker was open.
func (ep *endpoint) noteClosed() {
	if from := ep.openedAt.Swap(nil); from != nil {
		ep.wasOpen.Store(&openStretch{from: from, to: ep.rates.Mark()})
	}
}

// scoredRates is its rates over the window, less what was counted while
// its breaker was last open.
func (ep *endpoint) scoredRates() window.Totals {
	if s := ep.wasOpen.Load(); s != nil {
		return ep.rates.TotalsOutside(s.from, s.to)
	}
	return ep.rates.Totals()
}
