package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// A method slow on one endpoint alone is routed by that method's attempts
// there, not by the endpoint's other methods, once they are a few, those
// cut short by a faster endpoint counted as taking longer. eth_getLogs
// answered in 5 to 8 s on one endpoint and 50 ms on the others went on
// going to it at its 49.7 ms (4 answers and 8 attempts cut short its
// own), and clients' p99 was 5.2 s where a client of another endpoint had
// 69 ms.
func TestRoute_AMethodSlowOnOneEndpointIsRoutedByItsOwnAttempts(t *testing.T) {
	e, clock := clockedEngine(t, 2, nil)
	now := clock.Now()
	a, b := e.endpoints[0], e.endpoints[1]
	for i, ep := range e.endpoints {
		for range 200 {
			ep.latency.Record(time.Duration(40+40*i) * time.Millisecond) // a quicker at everything else
		}
		ep.heard(now)
	}
	logs := a.stats("eth_getLogs").latency
	for range 4 {
		logs.Record(5100 * time.Millisecond)
	}
	for range 8 {
		logs.RecordCensored(5100 * time.Millisecond)
	}
	for range 10 {
		b.stats("eth_getLogs").latency.Record(50 * time.Millisecond)
	}
	first := func(method string) string {
		r := e.rank(method, jsonrpc.ClassRead, false, false, 0, affinityPick{}, false)
		return r.order[0].ep.Name
	}
	if got := first("eth_getLogs"); got != b.Name {
		t.Errorf("eth_getLogs first to %s: a answers it in 5.1 s (4 answers, 8 attempts cut short), b in 50 ms", got)
	}
	if got := first("eth_call"); got != a.Name {
		t.Errorf("eth_call first to %s: a is the quicker at it", got)
	}
}
