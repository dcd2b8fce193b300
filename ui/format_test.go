package ui

import (
	"strings"
	"testing"
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
