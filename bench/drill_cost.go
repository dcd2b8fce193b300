package bench

import (
	"fmt"

	"github.com/rpcdash/rpcdash/engine"
)

// The drill judges which endpoint is best as the router decides it: by the
// routing cost the instance reports (score.cost_ms: the latency figure ×
// the error, tail and load factors, plus the lag's cost), for the method
// of the reads, not by a p50 (a p50 hides the tail a stats window still
// holds: "gamma serves, but beta is better: p50 62.0 ms against 42.2 ms"
// while beta's p99 was 2048 ms and the router was right).

// scoreFor is ep's routing score for method as the status gives it, the
// endpoint's over all methods when it has none for the method ("").
func scoreFor(ep engine.EndpointSnapshot, method string) engine.ScoreParts {
	if m, ok := ep.Methods[method]; ok && method != "" && m.Score.Cost > 0 {
		return m.Score
	}
	return ep.Score
}

// steadyCost is a score's cost in milliseconds without its load factor:
// the requests in flight at the instant of a status read (the drill's own
// read among them) come and go between reads.
func steadyCost(p engine.ScoreParts) float64 {
	load := max(p.LoadFactor, 1)
	return msOf(p.Cost-p.LagCost)/load + msOf(p.LagCost)
}

// costWords is a score's cost and its parts, as the router takes them.
func costWords(p engine.ScoreParts) string {
	s := fmt.Sprintf("cost %.1f ms (latency %.1f ms (%s) × error %.2f × tail %.2f", steadyCost(p), msOf(p.Latency), sourceWord(p.LatencySource), p.ErrorFactor, p.TailFactor)
	if p.LagCost > 0 {
		s += fmt.Sprintf(" + lag %.1f ms", msOf(p.LagCost))
	}
	return s + ")"
}

func sourceWord(src string) string {
	if src == "" {
		return "unmeasured"
	}
	return src
}

// bestBy returns the routable endpoint of st with the least steady cost for
// method ("" : over all methods), and that cost; ok is false when none is
// routable.
func bestBy(st engine.Snapshot, method string, skip string) (engine.EndpointSnapshot, float64, bool) {
	var best engine.EndpointSnapshot
	cost, ok := 0.0, false
	for _, ep := range st.Endpoints {
		if !ep.Routable || ep.Name == skip {
			continue
		}
		if c := steadyCost(scoreFor(ep, method)); !ok || c < cost {
			best, cost, ok = ep, c, true
		}
	}
	return best, cost, ok
}
