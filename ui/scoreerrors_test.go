package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// The score's failure rate is weighed only once the window holds enough
// attempts (a run of errors is the breaker's to judge). Seen live: an
// endpoint refusing every connection, its breaker open after a few, had
// "errors 1.00 (0.0% failed)" in its detail beside ERR% 100%. The detail
// says what the score counts: the same failed share as ERR%, not weighed.
func TestView_DetailScoreSaysFailuresNotWeighedYet(t *testing.T) {
	for _, name := range []string{"in-process", "attached"} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, "alpha", "beta")
			if err := r.eng.InjectFault(engine.ActorAdmin, "alpha", engine.FaultSpec{Mode: engine.FaultRefused}); err != nil {
				t.Fatal(err)
			}
			r.read(t, 3, "eth_getBalance")
			m := console(t, r.backends(t)[name], 160, 48, false)
			ep := m.snap.Endpoints[0]
			if ep.Name != "alpha" || ep.Rates.ErrorRate != 1 || ep.Rates.Attempts == 0 {
				t.Fatalf("%s: %d attempts, error rate %.2f; want alpha failing every attempt", ep.Name, ep.Rates.Attempts, ep.Rates.ErrorRate)
			}
			var score string
			for _, l := range m.detailLines(300) {
				if strings.Contains(l, "score (") {
					score = l
				}
			}
			want := fmt.Sprintf("errors 1.00 (100.0%% of %d attempts failed: not weighed below 20)", ep.Rates.Attempts)
			if !strings.Contains(score, want) {
				t.Errorf("alpha refusing every connection (ERR%% 100%%): score line lacks %q:\n%s", want, score)
			}
		})
	}
}
