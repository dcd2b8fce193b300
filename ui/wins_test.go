package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// Hedge wins are counted since the engine started: past 99999 (a day of
// 100 req/s) the WINS column's 5 cells cut 123456 to 12345. The count is
// written as the header writes counts, 123k.
func TestView_HedgeWinsAreNeverCut(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[0].Accounting.HedgesWon = 123456
	row := lineWith(fixedModel(s, themes.Default(), 120, 36).View(), "alchemy")
	if !strings.Contains(row, " 123k ") || strings.Contains(row, "12345") {
		t.Errorf("123456 hedge wins read otherwise than 123k:\n%s", row)
	}
}
