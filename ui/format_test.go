package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// A share just under 10% reads as 10%, like one just over: the decimal is
// for small shares, and "10.0%" beside "10%" in one column looks like two
// different figures.
func TestPercentages_OneDecimalOnlyBelowTen(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0%"}, {0.00004, "<0.1%"}, {0.042, "4.2%"}, {0.0994, "9.9%"},
		{0.09996, "10%"}, {0.1, "10%"}, {0.104, "10%"}, {0.5, "50%"},
	} {
		if got := pctText(c.v); got != c.want {
			t.Errorf("pctText(%v) = %q, want %q", c.v, got, c.want)
		}
		if got := strings.TrimSpace(fmtPct(c.v, true)); got != c.want {
			t.Errorf("fmtPct(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// The header's budget item keeps both figures whole at any traffic: at
// 120 reads/s the cap passes 100 units and "budget used 114.6/…" hid it.
func TestBudgetItem_BothFiguresFitAtAnyRate(t *testing.T) {
	for _, c := range []struct {
		cap, tokens float64
		want        string
	}{
		{10, 7.5, "budget used 2.5/10"},
		{137.2, 22.6, "budget used 115/138"},
		{1404, 405, "budget 999/1.4k"},
		{14_040, 2_000, "budget used 12k/14k"},
	} {
		got := budgetItem(engine.HedgeStatus{BudgetCap: c.cap, BudgetBurst: 10, BudgetTokens: c.tokens})
		if strings.TrimSpace(got) != c.want || len(got) != budgetWidth {
			t.Errorf("cap %v, tokens %v: %q, want %q in %d cells", c.cap, c.tokens, got, c.want, budgetWidth)
		}
	}
}
