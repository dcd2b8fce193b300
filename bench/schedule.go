package bench

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Arrivals is how send times are spaced.
type Arrivals int

const (
	// Uniform sends request i at i/rate.
	Uniform Arrivals = iota
	// Poisson draws exponential gaps with mean 1/rate from the seed.
	Poisson
)

// ParseArrivals accepts "uniform" and "poisson".
func ParseArrivals(s string) (Arrivals, error) {
	switch s {
	case "uniform":
		return Uniform, nil
	case "poisson":
		return Poisson, nil
	}
	return 0, fmt.Errorf("bench: --arrivals: %q is not uniform or poisson", s)
}

func (a Arrivals) String() string {
	if a == Poisson {
		return "poisson"
	}
	return "uniform"
}

// Schedule returns the send offsets from the start of the run: at most
// count of them (count ≤ 0: no count bound), all before duration. The same
// arguments give the same schedule.
func Schedule(a Arrivals, rate float64, duration time.Duration, count int, seed int64) ([]time.Duration, error) {
	if !(rate > 0) {
		return nil, fmt.Errorf("bench: rate must be positive, got %v", rate)
	}
	if duration <= 0 {
		return nil, fmt.Errorf("bench: duration must be positive, got %s", duration)
	}
	expected := int(rate*duration.Seconds()) + 1
	if count > 0 {
		expected = min(expected, count)
	}
	out := make([]time.Duration, 0, expected)
	r := rand.New(rand.NewPCG(uint64(seed), 0x617272697661))
	gap := float64(time.Second) / rate
	var t float64
	for i := 0; count <= 0 || i < count; i++ {
		switch a {
		case Poisson:
			if i > 0 {
				t += r.ExpFloat64() * gap
			}
		default:
			t = float64(i) * gap
		}
		off := time.Duration(t)
		if off >= duration {
			break
		}
		out = append(out, off)
	}
	return out, nil
}
