package bench

import (
	"fmt"
	"strings"

	"github.com/rpcdash/rpcdash/engine"
)

// A latency fault's endpoint still answers, only late. Its breaker opens
// when its attempts or probes pass their deadlines unanswered, or when
// hedges outrun 2 × breaker.failures of its attempts in a row while it has
// been silent for an attempt deadline (a hang). But its deadlines are
// learnt from its own answers: once its stats window holds slow answers
// (an earlier latency drill's, or the probes' answers seconds late) it is
// slow, not hung, and no breaker opens; the router ranks it behind the
// others by its routing cost (its latency figure and tail factor), and
// that is how it leaves routing. The drill takes either as the cut.

// drillMethods are the methods of the drill's own reads.
var drillMethods = []string{"eth_blockNumber", "eth_getBalance"}

// rankedBehind says whether the router ranks ep behind another routable
// endpoint, beyond router.tolerance, for every method of the drill's
// reads (over all methods without its own reads), because of the fault:
// its cost rose beyond router.tolerance of its cost in the status read
// before the fault. Otherwise the others' costs fell (on a busy machine
// the 20 ms sim's cost was seen at 58.4 ms before the fault and still 111
// ms after it, beta's falling from 47.4 to 44.0 ms): nothing from the
// fault. It gives the costs it compared.
func (d *drill) rankedBehind(st engine.Snapshot, ep engine.EndpointSnapshot) (bool, string) {
	methods := []string{""}
	if d.load != nil {
		methods = drillMethods
	}
	was, _ := d.before.Endpoint(ep.Name)
	var words []string
	for _, m := range methods {
		best, least, ok := bestBy(st, m, ep.Name)
		mine := scoreFor(ep, m)
		if !ok || engine.CostTies(steadyCost(mine), least, d.settings.RouterTolerance) {
			return false, ""
		}
		before := steadyCost(scoreFor(was, m))
		if engine.CostTies(steadyCost(mine), before, d.settings.RouterTolerance) {
			return false, ""
		}
		what := ""
		if m != "" {
			what = m + ": "
		}
		words = append(words, fmt.Sprintf("%s%s %s, %.1f ms before the fault, against %s's %s", what, ep.Name, costWords(mine), before, best.Name, costWords(scoreFor(best, m))))
	}
	return true, fmt.Sprintf("ranked behind the others by the router's cost, beyond router.tolerance %g: %s", d.settings.RouterTolerance, strings.Join(words, "; "))
}
