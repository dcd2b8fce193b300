package engine

import "github.com/rpcdash/rpcdash/engine/internal/window"

// An endpoint's attempts that ended while its breaker was open, from when
// it opened out of closed to when it closed again, are left out of its
// routing score's failure rate once it has closed. Asked only after every
// routable endpoint had failed (a failover's last resort, panic routing)
// or as trials, they say nothing of how it ranks beside the others once it
// is back, and they kept the fastest endpoint, readmitted and well, ranked
// after slower ones for the rest of the window (console audit, stop 56: an
// error factor of 8.75, from 1,165 failures of reads that failed over to
// it while it was open in an outage of every endpoint). Envoy's outlier
// detection likewise judges a host it lets back in afresh. Those counted
// before it opened count on: the failures that opened it, but for hangs,
// which its breaker is told of at their deadline and its rates when they
// end, within the stretch. Its error rate shown keeps all.

// noteClosed ends the stretch its breaker was open. Every such stretch
// still in the window is kept, not only the last: a flapping endpoint
// opens more than once in it.
func (ep *endpoint) noteClosed() {
	from := ep.openedAt.Swap(nil)
	if from == nil {
		return
	}
	var kept []window.Stretch
	if old := ep.wasOpen.Load(); old != nil {
		for _, st := range *old {
			if ep.rates.Within(st) {
				kept = append(kept, st)
			}
		}
	}
	kept = append(kept, window.Stretch{From: from, To: ep.rates.Mark()})
	ep.wasOpen.Store(&kept)
}

// scoredRates is its rates over the window, less what was counted while
// its breaker was open.
func (ep *endpoint) scoredRates() window.Totals {
	if st := ep.wasOpen.Load(); st != nil {
		return ep.rates.TotalsOutside(*st...)
	}
	return ep.rates.Totals()
}
