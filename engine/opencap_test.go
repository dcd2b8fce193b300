package engine

import (
	"testing"
)

func TestOpenLimit(t *testing.T) {
	for _, tt := range []struct {
		share     float64
		pool, max int
	}{
		{0.5, 1, 0}, {0.5, 2, 1}, {0.5, 3, 1}, {0.5, 4, 2}, {0.5, 10, 5},
		{0.1, 3, 1}, {0.99, 3, 2}, {1, 3, 3}, {0.5, 0, 0},
	} {
		if got := openLimit(tt.share, tt.pool); got != tt.max {
			t.Errorf("openLimit(%v, %d) = %d, want %d", tt.share, tt.pool, got, tt.max)
		}
	}
}
