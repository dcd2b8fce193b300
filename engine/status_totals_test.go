package engine_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

// The totals are the methods' sum in every snapshot, traffic running or
// not: they were read before the methods, so a snapshot taken under load
// showed totals.requests below the methods' sum (and attempts likewise),
// two figures of one document that did not agree.
func TestStatus_TotalsAreTheMethodsSumUnderTraffic(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(time.Millisecond)})
	methods := []string{"eth_blockNumber", "eth_chainId", "eth_gasPrice"}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				select {
				case <-stop:
					return
				default:
				}
				h.call(g*1000+i, methods[(g+i)%len(methods)])
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	check := func() {
		s := h.eng.Snapshot()
		var sum [6]int64
		for _, m := range s.Methods {
			sum[0] += m.Requests
			sum[1] += m.Primary
			sum[2] += m.AccountSnapshot.Hedge
			sum[3] += m.Failover
			sum[4] += m.ClientErrors
			sum[5] += m.Failures
		}
		tot := s.Totals
		if want := [6]int64{tot.Requests, tot.Primary, tot.Hedge, tot.Failover, tot.ClientErrors, tot.Failures}; sum != want {
			close(stop)
			t.Fatalf("methods' sums (requests, primary, hedge, failover, client errors, failures) %v, totals %v", sum, want)
		}
		if ok, sent := tot.Requests-tot.ClientErrors, tot.Primary+tot.Failover; ok > sent {
			close(stop)
			t.Fatalf("ok requests %d > primary+failover attempts %d", ok, sent)
		}
	}
	for n := 0; ; n++ {
		select {
		case <-done:
			check()
			if s := h.eng.Snapshot(); s.Totals.Requests != 600 {
				t.Fatalf("after 600 requests: totals.requests %d (%s)", s.Totals.Requests, fmt.Sprint(s.Totals))
			}
			return
		default:
			check()
		}
	}
}
