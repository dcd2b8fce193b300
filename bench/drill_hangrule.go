package bench

import (
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// hangRuleGrace is the time after the attempt deadline for the loss that
// passes it to end, past the longest hedge delay in force: the hedge that
// outruns it must still answer.
const hangRuleGrace = time.Second

// hangRuleWait is how long after a fault the engine's hang rule may leave an
// endpoint whose attempts hedges outrun in routing: besides 2 ×
// breaker.failures losses in a row, it waits until the endpoint has been
// silent for an attempt's deadline (a healthy endpoint that stalls a moment
// under many requests loses a dozen races, then answers again). Every
// attempt other clients send it meanwhile is one more loss, so past 2 ×
// breaker.failures the count says nothing; the time does. The deadline is
// the longest of the endpoint's methods', before the fault or at the cut.
func hangRuleWait(before, at engine.Snapshot, name string) (deadline, wait time.Duration) {
	for _, st := range []engine.Snapshot{before, at} {
		ep, ok := st.Endpoint(name)
		if !ok {
			continue
		}
		for _, m := range ep.Methods {
			deadline = max(deadline, m.AttemptTimeout)
		}
	}
	var delay time.Duration
	for _, m := range at.Methods {
		if m.Hedge != nil && m.Hedge.Enabled {
			delay = max(delay, m.Hedge.Delay)
		}
	}
	return deadline, deadline + delay + hangRuleGrace
}
