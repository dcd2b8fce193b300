package bench_test

import (
	"slices"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/bench"
)

func TestSchedule_UniformIsEvenAndBounded(t *testing.T) {
	got, err := bench.Schedule(bench.Uniform, 100, time.Second, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 {
		t.Fatalf("100 req/s for 1s: %d requests, want 100", len(got))
	}
	for i, off := range got {
		if want := time.Duration(i) * 10 * time.Millisecond; off != want {
			t.Fatalf("offset %d = %s, want %s", i, off, want)
		}
	}
	got, _ = bench.Schedule(bench.Uniform, 100, time.Second, 7, 0)
	if len(got) != 7 {
		t.Fatalf("count bound 7: got %d", len(got))
	}
	got, _ = bench.Schedule(bench.Uniform, 100, 55*time.Millisecond, 1000, 0)
	if len(got) != 6 || got[5] >= 55*time.Millisecond {
		t.Fatalf("duration bound: got %v", got)
	}
}

func TestSchedule_PoissonIsSeededWithTheRightRate(t *testing.T) {
	a, _ := bench.Schedule(bench.Poisson, 1000, 100*time.Second, 0, 7)
	b, _ := bench.Schedule(bench.Poisson, 1000, 100*time.Second, 0, 7)
	c, _ := bench.Schedule(bench.Poisson, 1000, 100*time.Second, 0, 8)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different schedules")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds, same schedule")
	}
	if n := len(a); n < 98000 || n > 102000 {
		t.Fatalf("1000/s for 100s gave %d arrivals", n)
	}
	if !slices.IsSorted(a) || a[len(a)-1] >= 100*time.Second {
		t.Fatal("offsets not sorted or past the duration")
	}
}

func TestSchedule_RejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		dur  time.Duration
	}{{0, time.Second}, {-1, time.Second}, {10, 0}} {
		if _, err := bench.Schedule(bench.Uniform, tc.rate, tc.dur, 0, 0); err == nil {
			t.Errorf("rate %v duration %s: no error", tc.rate, tc.dur)
		}
	}
	if _, err := bench.ParseArrivals("bursty"); err == nil {
		t.Error("ParseArrivals accepted bursty")
	}
}
