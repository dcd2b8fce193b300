package engine

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// /v1/status credits the concurrency leader the router does: the leader
// among the primaries, a standby (not in service) weighed apart, however
// quick. The status took it among every routable endpoint, and credited a
// 5 ms standby while the router credited the 20 ms primary (review of
// stop 57).
func TestScore_TheStatusCreditsTheLeaderTheRouterDoes(t *testing.T) {
	for _, standbyMS := range []int{25, 5} {
		e, clock := clockedEngine(t, 3, func(c *Config) { c.Endpoints[2].Role = RoleStandby })
		now := clock.Now()
		for i, ms := range []int{20, 60, standbyMS} {
			ep := e.endpoints[i]
			for range 60 {
				ep.latency.Record(time.Duration(ms) * time.Millisecond)
			}
			ep.heard(now)
			for _, load := range []int64{1, 2, 4, 8, 16} {
				for range 3 {
					ep.concurrency.add(now, load, time.Duration(ms)*time.Millisecond)
				}
			}
		}
		a := e.endpoints[0]
		a.startAttempts(8, now)
		r := e.rank("eth_getBalance", jsonrpc.ClassRead, false, false, 0, affinityPick{}, false)
		var routerCost float64
		for _, c := range r.order {
			if c.ep == a && !c.fallback {
				routerCost = c.cost
			}
			t.Logf("router order: %s cost %.1f fallback=%v", c.ep.Name, c.cost, c.fallback)
		}
		routable := make([]bool, len(e.endpoints))
		for i, ep := range e.endpoints {
			routable[i] = e.routable(ep, now)
		}
		st := e.scores("eth_getBalance", routable)
		s := e.Snapshot()
		t.Logf("standby %d ms: router cost of a %.1f ms; status a: concurrency %d load %.2f cost %s; snapshot a.Score.Concurrency=%d, c.Score.Concurrency=%d",
			standbyMS, routerCost, st[0].Concurrency, st[0].LoadFactor, st[0].Cost, s.Endpoints[0].Score.Concurrency, s.Endpoints[2].Score.Concurrency)
		if d := float64(st[0].Cost)/float64(time.Millisecond) - routerCost; d > 1 || d < -1 {
			t.Errorf("standby at %d ms: status says a costs %s (concurrency %d), the router weighs it at %.1f ms", standbyMS, st[0].Cost, st[0].Concurrency, routerCost)
		}
	}
}
