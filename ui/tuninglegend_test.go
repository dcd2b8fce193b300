package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
)

// The plot's legend said "delay 116ms: 5.0% of primaries outlast it and
// fire a hedge" above a table whose current row read FIRE% 3.6%: hedges
// go out a little after the delay (the hedge lag, 5.8 ms on a busy host)
// and the model counts that, the legend did not. The legend says what the
// curve shows, the share that outlasts the delay, and leaves the share
// that fires to the table.
func TestView_TuningLegendDoesNotContradictTheTablesFireRate(t *testing.T) {
	md := tuningDistribution()
	md.Hedge.Lag = 15 * time.Millisecond
	m := tuningModel(healthySnapshot(), md, 120, 36)
	var fire string
	for i, r := range m.tuning.rows {
		if r.policy.current {
			// As the engine forecasts it, the hedge lag counted.
			r.f = engine.Forecast(engine.ForecastInput{Primary: md.Primary, Targets: md.Targets, Delay: md.Hedge.Delay,
				MaxExtra: md.Hedge.MaxExtra, Budget: md.Hedge.Budget, Burst: md.Hedge.Holds(), Lag: md.Hedge.Lag})
			m.tuning.rows[i], fire = r, pctText(r.f.FireRate)
		}
	}
	legend := ""
	for _, l := range strings.Split(ansi.Strip(m.View()), "\n") {
		if strings.Contains(l, "━━ delay") {
			legend = l
		}
	}
	outlast := pctText(md.Primary.SurvivalAt(md.Hedge.Delay))
	if fire == "" || fire == outlast {
		t.Fatalf("the fixture shows nothing: FIRE%% %q, outlast %q", fire, outlast)
	}
	if !strings.Contains(legend, outlast+" of primaries outlast it") || strings.Contains(legend, "fire") && !strings.Contains(legend, fire) {
		t.Fatalf("legend %q beside the current row's FIRE%% %s", legend, fire)
	}
}
