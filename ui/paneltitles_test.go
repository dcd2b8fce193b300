package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/themes"
)

// The endpoint table's latencies and error shares reach back the stats
// window (5 minutes by default: a fault's ERR% stays that long after it
// ended), the methods' figures one minute, WINS since start. Where the
// panels have titles, they say so; a serve too old to say its window
// leaves the title plain rather than guess.
func TestView_PanelTitlesSayHowFarBackTheirFiguresReach(t *testing.T) {
	for _, tc := range []struct {
		window time.Duration
		want   string
	}{
		{5 * time.Minute, "Endpoints · P50 P95 ERR% 429% over the last 5m, WINS since start"},
		{90 * time.Second, "Endpoints · P50 P95 ERR% 429% over the last 1m30s, WINS since start"},
		{0, "─ Endpoints ─"},
	} {
		snap := healthySnapshot()
		snap.Settings.StatsWindow = tc.window
		for _, size := range [][2]int{{100, 30}, {120, 36}, {160, 48}} {
			m := fixedModel(snap, themes.Default(), size[0], size[1])
			m.focus = focusMethods
			got := m.View()
			checkFits(t, got, size[0], size[1])
			if !strings.Contains(got, tc.want) || !strings.Contains(got, "▶ Methods · last 1m ") {
				t.Errorf("window %v at %d×%d: want %q and the methods' last minute:\n%s", tc.window, size[0], size[1], tc.want, got)
			}
			if tc.window == 0 && strings.Contains(got, "over the last") {
				t.Errorf("a window not known is named at %d×%d:\n%s", size[0], size[1], got)
			}
		}
	}
}
