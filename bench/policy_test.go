package bench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		in, name, kind string
		delay          time.Duration
		q              float64
	}{
		{"direct", "direct", bench.KindDirect, 0, 0},
		{"off", "off", bench.KindOff, 0, 0},
		{"immediate", "immediate", bench.KindImmediate, 0, 0},
		{"auto", "auto p95", bench.KindAuto, 0, 0.95},
		{"auto:0.9", "auto p90", bench.KindAuto, 0, 0.9},
		{"120ms", "fixed 120ms", bench.KindFixed, 120 * time.Millisecond, 0},
		{"fixed:0.2s", "fixed 200ms", bench.KindFixed, 200 * time.Millisecond, 0},
	} {
		p, err := bench.ParsePolicy(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if p.Name != tc.name || p.Kind != tc.kind || p.Delay != tc.delay || p.Quantile != tc.q {
			t.Errorf("%s: got %+v", tc.in, p)
		}
	}
	for _, bad := range []string{"", "sometimes", "auto:1.5", "-5ms", "fixed:0s"} {
		if _, err := bench.ParsePolicy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// "0s" is a delay PUT /v1/hedge takes; refused here, it was called an
// unknown policy, "want ... or a delay such as 120ms".
func TestParsePolicy_ZeroDelayPointsToImmediate(t *testing.T) {
	for _, in := range []string{"0s", "fixed:0s", "0ms"} {
		_, err := bench.ParsePolicy(in)
		if err == nil || !strings.Contains(err.Error(), "must be above 0") || !strings.Contains(err.Error(), `"immediate" is the row that hedges at once`) {
			t.Errorf("%s: %v, want it to say a fixed delay must be above 0 and that immediate hedges at once", in, err)
		}
	}
}

func TestParsePolicies_ListsThenDelaysThenQuantilesEachOnce(t *testing.T) {
	ps, err := bench.ParsePolicies("direct, off,,immediate,auto", "100ms,50ms", "0.9,0.95")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	want := []string{"direct", "off", "immediate", "auto p95", "fixed 100ms", "fixed 50ms", "auto p90"}
	if len(names) != len(want) {
		t.Fatalf("rows %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("rows %v, want %v", names, want)
		}
	}
	for _, bad := range [][3]string{{" , ", "", ""}, {"off", "soon", ""}, {"off", "", "1"}, {"off", "-1s", ""}} {
		if _, err := bench.ParsePolicies(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
