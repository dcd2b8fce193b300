package engine

import (
	"testing"
)

func TestConcurrencyLeader(t *testing.T) {
	for _, tc := range []struct {
		lats []float64
		want int
	}{
		{[]float64{20, 60, 100}, 0},
		{[]float64{60, 20, 100}, 1},
		{[]float64{20, 39, 100}, -1}, // not twice as quick as the second
		{[]float64{20, 40}, 0},
		{[]float64{90, 92, 95}, -1},
		{[]float64{20, -1, 60}, 0}, // the unmeasured left out
		{[]float64{20}, -1},        // no other to be quicker than
		{[]float64{-1, -1}, -1},
		{nil, -1},
	} {
		if got := concurrencyLeader(len(tc.lats), func(i int) float64 { return tc.lats[i] }); got != tc.want {
			t.Errorf("concurrencyLeader(%v) = %d, want %d", tc.lats, got, tc.want)
		}
	}
}
