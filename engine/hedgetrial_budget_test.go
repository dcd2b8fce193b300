package engine

import (
	"encoding/json"
	"testing"
	"time"
)

// A trial counts the method's hedges since the change: those sent and
// those due but not sent for the hedge budget, which every method draws
// on. A trial at 250 ms read "the model holds" with none of its hedges
// sent, 407 refused for the budget methods at 50 ms had spent.
func TestHedgeTrial_CountsTheHedgesTheBudgetDidNotSend(t *testing.T) {
	e, _ := clockedEngine(t, 2, func(c *Config) { c.Hedge.Enabled = true })
	const method = "eth_getBalance"
	hm, _ := e.hedge.methods.get(method)
	for i := range 1000 {
		hm.primaries.Record(20*time.Millisecond + time.Duration(i)*200*time.Microsecond)
	}
	acct := e.acct.method(e.names.statsName(method))
	acct.refused[refusedBudget].Add(50) // before the change: not the trial's
	acct.hedgesFired.Add(7)
	delay := "150ms"
	if err := e.SetHedge(ActorAdmin, HedgeUpdate{Method: method, Delay: &delay}); err != nil {
		t.Fatal(err)
	}
	acct.refused[refusedBudget].Add(407)
	acct.hedgesFired.Add(3)
	md, err := e.MethodDistribution(method)
	if err != nil || md.Trial == nil {
		t.Fatalf("no trial: %v", err)
	}
	if tr := md.Trial; tr.BudgetRefused != 407 || tr.HedgesFired != 3 || !tr.Unhedged() {
		t.Fatalf("since the change: %d refused for the budget, %d sent, unhedged %v; want 407, 3, true", tr.BudgetRefused, tr.HedgesFired, tr.Unhedged())
	}
	b, _ := json.Marshal(md)
	var back MethodDistribution
	if err := json.Unmarshal(b, &back); err != nil || back.Trial == nil || back.Trial.BudgetRefused != 407 || back.Trial.HedgesFired != 3 {
		t.Errorf("read back from the wire: %+v, %v", back.Trial, err)
	}
}
