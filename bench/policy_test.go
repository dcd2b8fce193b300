package bench_test

import (
	"testing"

	"github.com/rpcdash/rpcdash/bench"
)

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		in, name, delay string
		on              bool
		q               float64
	}{
		{"off", "off", "", false, 0},
		{"auto", "auto p95", "auto", true, 0.95},
		{"auto:0.9", "auto p90", "auto", true, 0.9},
		{"immediate", "immediate", "1ms", true, 0},
		{"120ms", "fixed 120ms", "120ms", true, 0},
		{"fixed:0.2s", "fixed 200ms", "200ms", true, 0},
	} {
		p, err := bench.ParsePolicy(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if p.Name != tc.name || p.Hedge.Enabled != tc.on || p.Hedge.Delay != tc.delay || p.Hedge.Quantile != tc.q {
			t.Errorf("%s: got %+v", tc.in, p)
		}
		if tc.on && (p.Hedge.Budget != 0.10 || p.Hedge.MaxExtra != 1) {
			t.Errorf("%s: cost controls %+v", tc.in, p.Hedge)
		}
	}
	for _, bad := range []string{"", "sometimes", "auto:1.5", "-5ms", "fixed:0s"} {
		if _, err := bench.ParsePolicy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	ps, err := bench.ParsePolicies("off, auto,,150ms")
	if err != nil || len(ps) != 3 {
		t.Fatalf("ParsePolicies: %v %v", ps, err)
	}
	if _, err := bench.ParsePolicies(" , "); err == nil {
		t.Error("empty list accepted")
	}
}
