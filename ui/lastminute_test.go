package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// FIRE%, WIN% and amp are the last minute's, beside the minute's
// latencies. Read since start, a method whose hedging was turned off kept
// "off … 8.0%" for as long as the engine had run with it on, and the
// header's amp the hedges of long ago.
func TestView_HedgingFiguresAreTheLastMinutes(t *testing.T) {
	s := healthySnapshot()
	s.Hedge.Enabled = false
	for name, ms := range s.Methods {
		ms.FireRate, ms.WinRate, ms.Amplification = 0.08, 0.4, 1.08 // since start
		ms.Client.HedgesFired, ms.Client.HedgesWon, ms.Client.FireRate, ms.Client.WinRate, ms.Client.Amplification = 0, 0, 0, 0, 1
		if ms.Hedge != nil {
			ms.Hedge.Enabled = false
		}
		s.Methods[name] = ms
	}
	s.Totals.FireRate, s.Totals.Amplification = 0.08, 1.08
	s.Client.HedgesFired, s.Client.HedgesWon, s.Client.FireRate, s.Client.WinRate, s.Client.Amplification = 0, 0, 0, 0, 1
	view := fixedModel(s, themes.Default(), 120, 36).View()
	if row := lineWith(view, "eth_call"); strings.Contains(row, "8.0%") || !strings.Contains(row, " 0% ") {
		t.Errorf("eth_call, not hedged in the last minute, reads another fire rate than 0%%:\n%s", row)
	}
	if head := lineWith(view, "amp "); !strings.Contains(head, "amp 1.00×") {
		t.Errorf("the header's amplification is not the minute's 1.00×:\n%s", head)
	}

	s.Client.Requests = 0
	if head := lineWith(fixedModel(s, themes.Default(), 120, 36).View(), "amp "); !strings.Contains(head, "amp —") {
		t.Errorf("a minute with no request reads an amplification:\n%s", head)
	}
}
