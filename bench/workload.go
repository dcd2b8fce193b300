package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Workload is what a run sends, the same for every row: operations arrive
// on a seeded schedule, each of Fanout.K calls whose methods are drawn from
// Mix, a ControlShare of them sent as the control tenant.
type Workload struct {
	Mix      Mix
	Arrivals Arrivals
	Rate     float64       // operations per second
	Duration time.Duration // measured span, when Count is 0
	Count    int           // measured operations, instead of Duration; 0 = Rate × Duration
	Warmup   time.Duration // before the measured span, same rate, discarded
	Seed     int64         // the schedule, the mix, the tenants, the params and the sims
	Fanout   Fanout
	// Batch: each operation's Fanout.K calls go as one JSON-RPC batch (one
	// HTTP request), not K requests in parallel; it completes when its
	// answer arrives.
	Batch bool
	// ControlShare is the share of operations sent as the control tenant:
	// never hedged, alongside, to show what hedging costs everyone else.
	ControlShare float64
	Timeout      time.Duration // per call, from its scheduled send; 0 = 10s
}

// Validate reports the first bad value, naming its flag.
func (w Workload) Validate() error {
	switch {
	case len(w.Mix) == 0:
		return fmt.Errorf("bench: --mix: no methods")
	case !(w.Rate > 0) || w.Rate > maxRate:
		return fmt.Errorf("bench: --rate: want (0, %d] operations per second, got %v", maxRate, w.Rate)
	case w.Count < 0:
		return fmt.Errorf("bench: --count: must not be negative")
	case w.Count == 0 && (w.Duration <= 0 || w.Duration > time.Hour):
		return fmt.Errorf("bench: --duration: want (0, 1h], got %s", w.Duration)
	case w.Count == 0 && w.Rate*w.Duration.Seconds() < 1:
		// The measured span would hold no send: a report of n 0, exit 0.
		return fmt.Errorf("bench: --rate %v × --duration %s is %.2g calls: the measured span holds none (raise either, or give --count)", w.Rate, w.Duration, w.Rate*w.Duration.Seconds())
	case w.Warmup < 0 || w.Warmup > time.Hour:
		return fmt.Errorf("bench: --warmup: want [0, 1h], got %s", w.Warmup)
	case !(w.ControlShare >= 0 && w.ControlShare < 1): // NaN included
		return fmt.Errorf("bench: --control-share: want [0, 1), got %v", w.ControlShare)
	case w.Timeout < 0 || w.Timeout > time.Hour:
		return fmt.Errorf("bench: --timeout: want (0s, 1h], got %s", w.Timeout)
	case w.Count > 0 && time.Duration(float64(w.Count)/w.Rate*float64(time.Second)) > time.Hour:
		return fmt.Errorf("bench: --count %d at --rate %v lasts over an hour", w.Count, w.Rate)
	}
	if w.Batch {
		return w.Fanout.validateBatch()
	}
	return w.Fanout.validate()
}

// maxRate bounds --rate: the generator is one process on one machine.
const maxRate = 10000

// Measured is how long the measured span of a row lasts.
func (w Workload) Measured() time.Duration {
	if w.Count > 0 {
		return time.Duration(float64(w.Count) / w.Rate * float64(time.Second))
	}
	return w.Duration
}

// timeout is the per-call bound.
func (w Workload) timeout() time.Duration {
	if w.Timeout > 0 {
		return w.Timeout
	}
	return defaultTimeout
}

// MixEntry is one method of a mix and its weight.
type MixEntry struct {
	Method string  `json:"method"`
	Weight float64 `json:"weight"`
}

// Mix is the methods a workload draws from, with weights.
type Mix []MixEntry

// ParseMix accepts "method=weight,method=weight" (a bare method weighs 1).
func ParseMix(s string) (Mix, error) {
	var m Mix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, w, hasW := strings.Cut(part, "=")
		weight := 1.0
		if hasW {
			var err error
			if weight, err = strconv.ParseFloat(w, 64); err != nil || !(weight > 0) {
				return nil, fmt.Errorf("bench: --mix: %q: the weight must be a positive number", part)
			}
		}
		if name = strings.TrimSpace(name); name == "" || strings.ContainsAny(name, " \"\\") {
			return nil, fmt.Errorf("bench: --mix: %q is not a method name", part)
		}
		if slices.ContainsFunc(m, func(e MixEntry) bool { return e.Method == name }) {
			return nil, fmt.Errorf("bench: --mix: %s is listed twice", name)
		}
		m = append(m, MixEntry{Method: name, Weight: weight})
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("bench: --mix: no methods in %q", s)
	}
	return m, nil
}

func (m Mix) String() string {
	parts := make([]string, len(m))
	for i, e := range m {
		parts[i] = fmt.Sprintf("%s=%g", e.Method, e.Weight)
	}
	return strings.Join(parts, ",")
}

// Methods lists the mix's methods.
func (m Mix) Methods() []string {
	out := make([]string, len(m))
	for i, e := range m {
		out[i] = e.Method
	}
	return out
}

// heaviest is the method with the largest weight (the first of equals).
func (m Mix) heaviest() string {
	best := 0
	for i, e := range m {
		if e.Weight > m[best].Weight {
			best = i
		}
	}
	return m[best].Method
}

// pick maps u in [0, 1) to a method, in proportion to the weights.
func (m Mix) pick(u float64) string {
	var total float64
	for _, e := range m {
		total += e.Weight
	}
	x := u * total
	for _, e := range m {
		if x < e.Weight {
			return e.Method
		}
		x -= e.Weight
	}
	return m[len(m)-1].Method
}

// Fanout is an operation of K parallel calls that completes when Q of
// them have answered (Q = K: all). K = 1 is a plain request.
type Fanout struct {
	K int `json:"k"`
	Q int `json:"q"`
}

// ParseFanout accepts "K" or "K/Q".
func ParseFanout(s string) (Fanout, error) {
	k, q, hasQ := strings.Cut(s, "/")
	var f Fanout
	var err error
	if f.K, err = strconv.Atoi(strings.TrimSpace(k)); err != nil {
		return f, fmt.Errorf("bench: --fanout: %q: want K or K/Q", s)
	}
	if f.K < 1 {
		return f, fmt.Errorf("bench: --fanout: %q: K must be at least 1", s)
	}
	f.Q = f.K
	if hasQ {
		if f.Q, err = strconv.Atoi(strings.TrimSpace(q)); err != nil {
			return f, fmt.Errorf("bench: --fanout: %q: want K or K/Q", s)
		}
	}
	return f, f.validate()
}

func (f Fanout) validate() error {
	if f.K == 0 && f.Q == 0 {
		return nil // a plain request
	}
	if f.K < 1 || f.K > 100 || f.Q < 1 || f.Q > f.K {
		return fmt.Errorf("bench: --fanout: want 1 ≤ Q ≤ K ≤ 100, got %d/%d", f.K, f.Q)
	}
	return nil
}

// maxBatch is the largest --batch: server.max_batch's default, geth's.
const maxBatch = 1000

func (f Fanout) validateBatch() error {
	if f.K < 1 || f.K > maxBatch || f.Q != f.K {
		return fmt.Errorf("bench: --batch: want 1 ≤ K ≤ %d calls, got %d", maxBatch, f.K)
	}
	return nil
}

// calls is the number of calls in one operation.
func (f Fanout) calls() int { return max(f.K, 1) }

// quorum is how many answers complete an operation.
func (f Fanout) quorum() int { return max(min(f.Q, f.K), 1) }

func (f Fanout) String() string {
	if f.calls() == 1 {
		return "none"
	}
	if f.quorum() == f.calls() {
		return fmt.Sprintf("%d calls, all must answer", f.K)
	}
	return fmt.Sprintf("%d calls, the first %d answers complete it", f.K, f.Q)
}
