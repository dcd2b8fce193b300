package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HedgeSpec is the engine's [hedge] section as a policy sets it; zero
// fields leave the engine's defaults.
type HedgeSpec struct {
	Enabled  bool    `json:"enabled"`
	Delay    string  `json:"delay,omitempty"` // "auto" or a duration such as "120ms"
	Quantile float64 `json:"quantile,omitempty"`
	Budget   float64 `json:"budget,omitempty"`
	MaxExtra int     `json:"max_extra,omitempty"`
}

// Policy is a named hedging configuration to compare.
type Policy struct {
	Name  string    `json:"name"`
	Hedge HedgeSpec `json:"hedge"`
	// Direct sends the load straight to the first upstream, no engine: the
	// bare single-attempt distribution, a second baseline for the model.
	Direct bool `json:"direct,omitempty"`
}

// Hedged policies share issue 3's cost controls: one duplicate at most and
// a budget of 10 % extra load.
const (
	defaultBudget   = 0.10
	defaultMaxExtra = 1
)

// immediateDelay stands for "no wait": the engine refuses a zero delay.
const immediateDelay = time.Millisecond

// ParsePolicy accepts "off", "auto" (the p95), "auto:Q" (quantile Q),
// "immediate", a fixed delay as "120ms" or "fixed:120ms", and "direct".
func ParsePolicy(s string) (Policy, error) {
	s = strings.TrimSpace(s)
	on := func(name, delay string, q float64) Policy {
		return Policy{Name: name, Hedge: HedgeSpec{Enabled: true, Delay: delay, Quantile: q,
			Budget: defaultBudget, MaxExtra: defaultMaxExtra}}
	}
	switch {
	case s == "off":
		return Policy{Name: "off", Hedge: HedgeSpec{Enabled: false}}, nil
	case s == "direct":
		return Policy{Name: "direct", Direct: true}, nil
	case s == "auto":
		return on("auto p95", "auto", 0.95), nil
	case strings.HasPrefix(s, "auto:"):
		q, err := strconv.ParseFloat(strings.TrimPrefix(s, "auto:"), 64)
		if err != nil || q <= 0 || q >= 1 {
			return Policy{}, fmt.Errorf("bench: policy %q: quantile must be in (0,1)", s)
		}
		return on(fmt.Sprintf("auto p%g", 100*q), "auto", q), nil
	case s == "immediate":
		return on("immediate", immediateDelay.String(), 0), nil
	}
	d, err := time.ParseDuration(strings.TrimPrefix(s, "fixed:"))
	if err != nil || d <= 0 {
		return Policy{}, fmt.Errorf("bench: unknown policy %q (want off, auto, auto:Q, immediate, direct or a delay such as 120ms)", s)
	}
	return on("fixed "+d.String(), d.String(), 0), nil
}

// ParsePolicies parses a comma-separated list.
func ParsePolicies(list string) ([]Policy, error) {
	var out []Policy
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		p, err := ParsePolicy(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: no policies in %q", list)
	}
	return out, nil
}
